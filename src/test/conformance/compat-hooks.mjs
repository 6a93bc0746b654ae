// Module load hook for Node 20 (Debian 12's). The conformance CLI imports `globSync` from 'fs' by
// name; fs.globSync exists only from Node 22, so on 20 the import fails before anything runs. The
// hook drops that one name from the CLI's import and binds it to a stub that throws if called
// (the server scenarios never call it). Registered by compat.mjs: node --import ./compat.mjs ...
export async function load(url, context, nextLoad)
{
    const result = await nextLoad(url, context);
    if (!url.includes('/@modelcontextprotocol/conformance/dist/'))
        return result;
    const source = String(result.source ?? '');
    const imported = source.match(/globSync as (\w+),/);
    if (!imported)
        return result;
    const stub = `\nfunction ${imported[1]}() { throw new Error('fs.globSync needs Node 22'); }\n`;
    return { ...result, source: source.replace(imported[0], '') + stub, shortCircuit: true };
}
