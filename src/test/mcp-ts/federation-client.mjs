// The TypeScript SDK 2.x client (@modelcontextprotocol/client) in front of a federation of MCP
// servers through Sandgate, driven by McpFederationIT.
//
//   node federation-client.mjs <url> <calls as JSON: [{"name": ..., "arguments": {...}}]> [log messages to wait for] [auto]
//
// It declares sampling and elicitation, answers every sampling request with "forty-two" and every
// elicitation with what its form asks for (true for a flag, made-up strings), pages through the
// whole tools/list, then calls each tool given with a progress callback. It records the log
// messages and tools/list_changed notifications it gets and, when told how many log messages to
// expect, waits for them before it closes. With "auto" the client chooses the revision itself (a
// server/discover probe, then 2026-07-28 if offered), else it opens a 2025 session. It prints one
// JSON line (what it saw) and exits 0, or 1 on any error (the line then has "ok": false and "error").

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const HARD_TIMEOUT_MS = 30_000;
const report = { ok: false, step: 'start', serverName: null, capabilities: null, pages: 0, tools: [], calls: [], sampling: [], elicitation: [], logs: [], listChanged: 0 };

function finish(code, message)
{
    if (message)
    {
        report.error = message;
        process.stderr.write(`federation-client.mjs: ${message}\n`);
    }
    process.stdout.write(JSON.stringify(report) + '\n', () => process.exit(code));
}

const textOf = content => (content ?? []).filter(c => c.type === 'text').map(c => c.text).join('\n');

async function main()
{
    const [url, rawCalls, rawLogs, mode] = process.argv.slice(2);
    const client = new Client({ name: 'sandgate-federation-client', version: '1.0.0' },
        { capabilities: { sampling: {}, elicitation: { form: {} } }, ...(mode ? { versionNegotiation: { mode } } : {}) });
    client.setRequestHandler('sampling/createMessage', async request =>
    {
        report.sampling.push(textOf(request.params.messages.map(m => m.content)));
        return { role: 'assistant', content: { type: 'text', text: 'forty-two' }, model: 'test-model' };
    });
    client.setRequestHandler('elicitation/create', async request =>
    {
        report.elicitation.push(request.params.message);
        // What the form asks for: true for a flag, a made-up address or name for a string.
        const content = {};
        for (const [key, property] of Object.entries(request.params.requestedSchema?.properties ?? {}))
            content[key] = property.type === 'boolean' ? true : key === 'email' || property.format === 'email' ? 'sandgate@example.com' : 'sandgate';
        return { action: 'accept', content };
    });
    client.setNotificationHandler('notifications/message', notification => { report.logs.push(notification.params.data); });
    client.setNotificationHandler('notifications/tools/list_changed', () => { report.listChanged++; });
    report.step = 'connect';
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    report.serverName = client.getServerVersion()?.name ?? null;
    report.protocolVersion = client.getNegotiatedProtocolVersion() ?? null;
    report.capabilities = client.getServerCapabilities() ?? null;

    report.step = 'tools/list';
    let cursor;
    do
    {
        const page = await client.listTools(cursor ? { cursor } : undefined);
        report.pages++;
        report.tools.push(...page.tools.map(t => t.name));
        cursor = page.nextCursor;
    }
    while (cursor);

    for (const call of JSON.parse(rawCalls ?? '[]'))
    {
        report.step = `tools/call ${call.name}`;
        const progress = [];
        const result = await client.callTool({ name: call.name, arguments: call.arguments ?? {} }, { onprogress: p => progress.push(p.progress) });
        report.calls.push({ name: call.name, text: textOf(result.content), isError: result.isError === true, progress });
    }

    report.step = 'logs';
    while (report.logs.length < Number(rawLogs ?? 0))
        await new Promise(resolve => setTimeout(resolve, 20));

    report.step = 'close';
    await client.close();
    report.ok = true;
}

setTimeout(() => finish(3, `no end after ${HARD_TIMEOUT_MS} ms (step ${report.step})`), HARD_TIMEOUT_MS).unref();
main().then(() => finish(0), error => finish(1, `${report.step}: ${error?.stack ?? error}`));
