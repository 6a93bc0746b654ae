// The TypeScript SDK 2.x client (@modelcontextprotocol/client), used as an application would use
// it, talking to an MCP server through Sandgate. Driven by TypeScriptSdk2ClientIT.
//
//   node client2.mjs <url> <progress tool> [tool arguments as JSON]
//
// The client negotiates the revision itself (versionNegotiation 'auto': a server/discover probe,
// then 2026-07-28 if the server offers it, else the 2025 initialize handshake). It lists the
// tools, calls the progress tool with a progress callback, and, when the server declares them,
// lists the resources and reads the first textual one and lists and gets the first prompt that takes no
// arguments. It prints one JSON line (what it saw) and exits 0, or 1 on any error (the line then
// has "ok": false and "error").

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const HARD_TIMEOUT_MS = 30_000;
const started = Date.now();
const report = {
    ok: false,
    step: 'start',
    protocolVersion: null,
    serverName: null,
    tools: [],
    progress: [],
    toolText: null,
    resources: [],
    resourceText: null,
    prompts: [],
    promptText: null,
    elapsedMs: 0
};

function finish(code, message)
{
    report.elapsedMs = Date.now() - started;
    if (message)
    {
        report.error = message;
        process.stderr.write(`client2.mjs: ${message}\n`);
    }
    process.stdout.write(JSON.stringify(report) + '\n', () => process.exit(code));
}

const textOf = content => (content ?? []).filter(c => c.type === 'text').map(c => c.text).join('\n');

async function main()
{
    const [url, progressTool, rawArguments] = process.argv.slice(2);
    if (!url || !progressTool)
    {
        process.stderr.write('usage: node client2.mjs <url> <progress tool> [tool arguments as JSON]\n');
        process.exit(2);
    }
    const client = new Client({ name: 'sandgate-ts-sdk2-client', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    const transport = new StreamableHTTPClientTransport(new URL(url));

    report.step = 'connect';
    await client.connect(transport);
    report.protocolVersion = client.getNegotiatedProtocolVersion() ?? null;
    report.serverName = client.getServerVersion()?.name ?? null;
    const capabilities = client.getServerCapabilities() ?? {};

    report.step = 'tools/list';
    report.tools = (await client.listTools()).tools.map(t => t.name).sort();

    report.step = 'tools/call';
    const result = await client.callTool(
        { name: progressTool, arguments: rawArguments ? JSON.parse(rawArguments) : {} },
        { onprogress: p => report.progress.push(p.progress) });
    if (result.isError)
        throw new Error(`${progressTool} answered an error: ${textOf(result.content)}`);
    report.toolText = textOf(result.content);

    if (capabilities.resources)
    {
        report.step = 'resources/list';
        const resources = (await client.listResources()).resources;
        report.resources = resources.map(r => r.uri).sort();
        report.step = 'resources/read';
        const textual = resources.find(r => r.mimeType?.startsWith('text/')) ?? resources[0];
        const read = await client.readResource({ uri: textual.uri });
        report.resourceText = read.contents[0]?.text ?? null;
    }
    if (capabilities.prompts)
    {
        report.step = 'prompts/list';
        const prompts = (await client.listPrompts()).prompts;
        report.prompts = prompts.map(p => p.name).sort();
        const plain = prompts.find(p => !(p.arguments ?? []).some(a => a.required));
        report.step = 'prompts/get';
        const prompt = await client.getPrompt({ name: plain.name });
        report.promptText = textOf(prompt.messages.map(m => m.content));
    }

    report.step = 'close';
    await client.close();
    report.ok = true;
}

setTimeout(() => finish(3, `no end after ${HARD_TIMEOUT_MS} ms (step ${report.step})`), HARD_TIMEOUT_MS).unref();
main().then(() => finish(0), error => finish(1, `${report.step}: ${error?.stack ?? error}`));
