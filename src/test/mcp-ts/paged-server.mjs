// A small MCP server on the TypeScript SDK 2.x (@modelcontextprotocol/server), 2025-era sessions
// only, whose tools/list pages: the federation tests need members whose lists are longer than one
// page. Its tools answer "<server name>:<tool>"; 'ask' asks the client to sample and 'confirm'
// elicits, each answering what the client said; 'progress' reports progress 1..3 when asked.
//
//   node paged-server.mjs <port> <server name> <tools> <page size> [sessionless]
//
// With "sessionless" it makes no sessions: every POST is served on its own, as Streamable HTTP
// allows, and GET is 405.
//
// Prints "listening http://127.0.0.1:<port>/mcp" once it accepts connections.

import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';

import { Server, WebStandardStreamableHTTPServerTransport, isInitializeRequest } from '@modelcontextprotocol/server';

import { respond } from './node-http.mjs';

const [port, name, count, pageSize] = [Number(process.argv[2] ?? 0), process.argv[3] ?? 'paged', Number(process.argv[4] ?? 5), Number(process.argv[5] ?? 2)];
const sessionless = process.argv[6] === 'sessionless';
const text = value => ({ type: 'text', text: value });
const TOOLS = ['ask', 'confirm', 'progress', 'echo'];
// Not listed: tools on the session's own GET stream.
const UNLISTED = ['ask_aside', 'broadcast', 'forget_sessions'];
for (let i = 0; TOOLS.length < count; i++)
    TOOLS.push(`tool_${String(i).padStart(2, '0')}`);
const sessions = new Map();

/** Requests to the client on the stream of the call that makes them, rather than on the session's GET stream. */
const onThisCall = ctx => ({ relatedRequestId: ctx.mcpReq.id });

function buildServer()
{
    const server = new Server({ name, version: '1.0.0' }, { capabilities: { tools: { listChanged: true }, logging: {} } });
    server.setRequestHandler('tools/list', async request =>
    {
        const start = Number(request.params?.cursor ?? 0);
        if (!Number.isInteger(start) || start < 0 || start > TOOLS.length)
            throw new Error('bad cursor');
        const end = Math.min(TOOLS.length, start + pageSize);
        const tools = TOOLS.slice(start, end).map(tool => ({ name: tool, description: `${tool} of ${name}`, inputSchema: { type: 'object', properties: {} } }));
        return end < TOOLS.length ? { tools, nextCursor: String(end) } : { tools };
    });
    server.setRequestHandler('tools/call', async (request, ctx) =>
    {
        const tool = request.params.name;
        if (!TOOLS.includes(tool) && !UNLISTED.includes(tool))
            return { content: [text(`unknown tool ${tool}`)], isError: true };
        if (tool === 'ask')
        {
            const answer = await ctx.mcpReq.requestSampling({ messages: [{ role: 'user', content: text(`question from ${name}`) }], maxTokens: 10 }, onThisCall(ctx));
            return { content: [text(`${name}:ask:${answer.content?.text}`)] };
        }
        if (tool === 'confirm')
        {
            const answer = await ctx.mcpReq.elicitInput({ message: `confirm for ${name}`, requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] } }, onThisCall(ctx));
            return { content: [text(`${name}:confirm:${answer.action}:${JSON.stringify(answer.content ?? {})}`)] };
        }
        if (tool === 'ask_aside')
        {
            const answer = await ctx.mcpReq.requestSampling({ messages: [{ role: 'user', content: text(`aside from ${name}`) }], maxTokens: 10 });
            return { content: [text(`${name}:ask_aside:${answer.content?.text}`)] };
        }
        if (tool === 'broadcast')
        {
            const count = Number(request.params.arguments?.count ?? 1);
            for (let i = 1; i <= count; i++)
                await server.notification({ method: 'notifications/message', params: { level: 'info', data: `${name} note ${i}` } });
            await server.notification({ method: 'notifications/tools/list_changed' });
            return { content: [text(`${name}:broadcast:${count}`)] };
        }
        if (tool === 'forget_sessions')
        {
            // As a restart would: every session is unknown from now on (404); this answer still goes out on its stream.
            sessions.clear();
            return { content: [text(`${name}:forget_sessions`)] };
        }
        if (tool === 'progress')
        {
            const token = ctx.mcpReq._meta?.progressToken;
            for (let step = 1; step <= 3 && token !== undefined; step++)
                await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: step, total: 3 } });
        }
        return { content: [text(`${name}:${tool}`)] };
    });
    return server;
}

async function serve(request)
{
    if (sessionless)
    {
        if (request.method !== 'POST')
            return new Response(null, { status: 405, headers: { allow: 'POST' } });
        const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
        await buildServer().connect(transport);
        return transport.handleRequest(request);
    }
    const sessionId = request.headers.get('mcp-session-id');
    if (sessionId)
    {
        const transport = sessions.get(sessionId);
        return transport ? transport.handleRequest(request)
            : Response.json({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } }, { status: 404 });
    }
    const body = request.method === 'POST' ? await request.clone().json().catch(() => undefined) : undefined;
    if (!isInitializeRequest(body))
        return Response.json({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'no session' } }, { status: 400 });
    const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: id => { sessions.set(id, transport); },
        onsessionclosed: id => { sessions.delete(id); }
    });
    await buildServer().connect(transport);
    return transport.handleRequest(request);
}

async function handle(req, res)
{
    const url = new URL(req.url, 'http://127.0.0.1');
    if (url.pathname !== '/mcp')
    {
        res.writeHead(404).end();
        return;
    }
    await respond(req, res, url, serve);
}

const http = createServer((req, res) => handle(req, res).catch(error =>
{
    process.stderr.write(`paged-server: ${error.stack ?? error}\n`);
    if (!res.headersSent)
        res.writeHead(500);
    res.end();
}));
http.listen(port, '127.0.0.1', () => process.stdout.write(`listening http://127.0.0.1:${http.address().port}/mcp\n`));
for (const signal of ['SIGTERM', 'SIGINT'])
    process.on(signal, () => { http.closeAllConnections(); http.close(() => process.exit(0)); });
