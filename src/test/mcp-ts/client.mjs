// The official TypeScript MCP SDK client, used as any application would use it (no patches, no
// private fields), talking to an MCP server through Sandgate. Driven by TypeScriptSdkClientIT.
//
//   node client.mjs <transport: sse|streamable> <url>
//
// sse:        SSEClientTransport (HTTP+SSE, 2024-11-05), url = .../mcp/{server}/sse
// streamable: StreamableHTTPClientTransport (Streamable HTTP), url = .../mcp/{server}/mcp
//
// The client declares the sampling capability and answers every sampling/createMessage with the
// text "forty-two". It runs initialize (connect), tools/list, 200 tools/call of echo ("call <i>"
// must come back as "echo: call <i>"), then ask (must come back as "client said: forty-two"), and
// closes (a Streamable HTTP session is ended with DELETE first, as a well-behaved client does).
// On success it prints one JSON line with counts and exits 0; on any mismatch or error it prints
// a clear message on stderr, a JSON line with "ok": false on stdout, and exits 1 (2: bad usage,
// 3: the hard timeout). Each step (every 50th echo call) is logged on stderr as "step <name> at
// <ms> ms" as it starts, so that a run killed from outside still says where it was.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const HARD_TIMEOUT_MS = 60_000;
const REQUEST_TIMEOUT_MS = 15_000;
const ECHO_CALLS = 200;
const SAMPLING_ANSWER = 'forty-two';
const QUESTION = 'meaning of life?';
const EXPECTED_TOOLS = ['add', 'ask', 'echo', 'progress'];

const started = Date.now();
const report = {
    ok: false,
    transport: null,
    url: null,
    step: 'start',
    serverName: null,
    protocolVersion: null,
    sessionId: null,
    tools: [],
    echoCalls: 0,
    echoMatched: 0,
    ask: null,
    samplingRequests: 0,
    samplingQuestions: [],
    terminated: false,
    transportErrors: [],
    elapsedMs: 0
};

function step(name, logged = true) {
    report.step = name;
    if (logged) {
        process.stderr.write(`step ${name} at ${Date.now() - started} ms\n`);
    }
}

function finish(code, message) {
    report.elapsedMs = Date.now() - started;
    if (message) {
        report.error = message;
        process.stderr.write(`client.mjs: ${message}\n`);
    }
    process.stdout.write(JSON.stringify(report) + '\n', () => process.exit(code));
}

class Mismatch extends Error {}

function expectEqual(what, actual, expected) {
    if (actual !== expected) {
        throw new Mismatch(`${what}: expected ${JSON.stringify(expected)} but got ${JSON.stringify(actual)}`);
    }
}

function textOf(result, what) {
    if (result?.isError) {
        throw new Mismatch(`${what}: the tool answered an error: ${JSON.stringify(result.content)}`);
    }
    const texts = (result?.content ?? []).filter(c => c.type === 'text').map(c => c.text);
    if (texts.length !== 1) {
        throw new Mismatch(`${what}: expected one text content but got ${JSON.stringify(result?.content)}`);
    }
    return texts[0];
}

async function main() {
    const [kind, rawUrl] = process.argv.slice(2);
    if (!['sse', 'streamable'].includes(kind) || !rawUrl) {
        process.stderr.write('usage: node client.mjs <transport: sse|streamable> <url>\n');
        process.exit(2);
    }
    report.transport = kind;
    report.url = rawUrl;
    const url = new URL(rawUrl);

    const hardTimeout = setTimeout(
        () => finish(3, `hard timeout: not done after ${HARD_TIMEOUT_MS} ms (last step: ${report.step})`),
        HARD_TIMEOUT_MS);
    hardTimeout.unref();

    const client = new Client(
        { name: 'sandgate-ts-sdk-check', version: '1.0.0' },
        { capabilities: { sampling: {} } });
    client.setRequestHandler(CreateMessageRequestSchema, async request => {
        report.samplingRequests++;
        for (const message of request.params.messages) {
            if (message.content?.type === 'text') {
                report.samplingQuestions.push(message.content.text);
            }
        }
        return {
            role: 'assistant',
            content: { type: 'text', text: SAMPLING_ANSWER },
            model: 'sandgate-test-model',
            stopReason: 'endTurn'
        };
    });
    client.onerror = error => report.transportErrors.push(`${report.step}: ${error?.message ?? error}`);

    const transport = kind === 'sse' ? new SSEClientTransport(url) : new StreamableHTTPClientTransport(url);
    const options = { timeout: REQUEST_TIMEOUT_MS };

    step('initialize');
    await client.connect(transport, options);
    report.serverName = client.getServerVersion()?.name ?? null;
    if (kind === 'streamable') {
        report.protocolVersion = transport.protocolVersion ?? null;
        report.sessionId = transport.sessionId ?? null;
        if (!report.sessionId) {
            throw new Mismatch('initialize: the gateway gave no Mcp-Session-Id');
        }
    }

    step('tools/list');
    const listed = await client.listTools(undefined, options);
    report.tools = listed.tools.map(t => t.name).sort();
    expectEqual('tools/list', JSON.stringify(report.tools), JSON.stringify(EXPECTED_TOOLS));

    for (let i = 0; i < ECHO_CALLS; i++) {
        step(`tools/call echo #${i}`, i % 50 === 0);
        const result = await client.callTool({ name: 'echo', arguments: { text: `call ${i}` } }, undefined, options);
        report.echoCalls++;
        expectEqual(`tools/call echo #${i}`, textOf(result, `tools/call echo #${i}`), `echo: call ${i}`);
        report.echoMatched++;
    }

    step('tools/call ask');
    const asked = await client.callTool({ name: 'ask', arguments: { question: QUESTION } }, undefined, options);
    report.ask = textOf(asked, 'tools/call ask');
    expectEqual('tools/call ask', report.ask, `client said: ${SAMPLING_ANSWER}`);
    expectEqual('sampling requests received', report.samplingRequests, 1);
    expectEqual('sampling question received', report.samplingQuestions[0], QUESTION);

    if (kind === 'streamable') {
        step('DELETE session');
        await transport.terminateSession();
        report.terminated = true;
    }
    step('close');
    await client.close();
    step('done');
    report.ok = true;
}

main().then(
    () => finish(0),
    error => finish(1, error instanceof Mismatch
        ? `mismatch: ${error.message}`
        : `failed at ${report.step}: ${error?.stack ?? error}${error?.cause ? `\n  cause: ${error.cause?.stack ?? error.cause}` : ''}`));
