// Sandgate's own reference MCP server, built on the TypeScript SDK 2.x (@modelcontextprotocol/server)
// with its public API only. It offers the tools, prompts and resources that the official
// conformance suite's server scenarios ask for (written from the scenarios' descriptions), so
// that ConformanceIT can score it directly and through the gateway, and TypeScriptSdk2ClientIT
// can drive a 2.x client against it.
//
//   node reference-server.mjs [port]        (or PORT=...; 0 or nothing: a free port)
//
// Prints "listening http://127.0.0.1:<port>/mcp" on stdout once it accepts connections.
//
// One endpoint, /mcp, serves both eras. The SDK allows it, but not in one object:
// createMcpHandler serves 2026-07-28 (stateless, per-request _meta envelope) and, by default,
// answers 2025-era traffic only statelessly (GET and DELETE get 405). A 2025 client that wants
// sessions, resumable streams and server-to-client requests needs the sessionful
// WebStandardStreamableHTTPServerTransport, so each request is classified with the SDK's own
// isLegacyRequest (the exact test the handler itself runs) and sent to one or the other; the
// handler is made with legacy: 'reject' so that it never second-guesses that routing.
//
// GET /observed answers what this server has seen on /mcp (HTTP method, MCP-Protocol-Version,
// Mcp-Method, whether a session id came along, the names of the Mcp-Param-* headers): the tests read it to learn which revision a
// client chose, as the server saw it rather than as the client reports it.

import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';

import {
    McpServer,
    ResourceTemplate,
    WebStandardStreamableHTTPServerTransport,
    completable,
    createMcpHandler,
    fromJsonSchema,
    hostHeaderValidationResponse,
    inputRequired,
    inputResponse,
    isInitializeRequest,
    isLegacyRequest,
    localhostAllowedHostnames,
    localhostAllowedOrigins,
    originValidationResponse
} from '@modelcontextprotocol/server';
import * as z from 'zod/v4';

import { respond } from './node-http.mjs';

const MCP_PATH = '/mcp';
const OBSERVED_PATH = '/observed';
// 1x1 PNG (one red pixel) and a 44-byte WAV header with no samples: the smallest valid files.
const RED_PIXEL_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const SILENT_WAV = Buffer.from('RIFF$\0\0\0WAVEfmt \x10\0\0\0\x01\0\x01\0\x40\x1f\0\0\x80\x3e\0\0\x02\0\x10\0data\0\0\0\0', 'latin1')
    .toString('base64');
const STEP_MS = 50;

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));
const text = value => ({ type: 'text', text: value });

/** The server of one unit of service: one 2025 session, or one 2026-07-28 request. */
function buildServer(era)
{
    const server = new McpServer(
        { name: 'sandgate-reference-server', version: '1.0.0' },
        { capabilities: { logging: {}, completions: {}, resources: { subscribe: true } } });
    registerTools(server, era);
    registerResources(server);
    registerPrompts(server);
    return server;
}

function registerTools(server, era)
{
    server.registerTool('test_simple_text', { description: 'Answers one fixed text' },
        async () => ({ content: [text('This is a simple text response for testing.')] }));

    server.registerTool('test_image_content', { description: 'Answers a 1x1 PNG image' },
        async () => ({ content: [{ type: 'image', data: RED_PIXEL_PNG, mimeType: 'image/png' }] }));

    server.registerTool('test_audio_content', { description: 'Answers a minimal WAV file' },
        async () => ({ content: [{ type: 'audio', data: SILENT_WAV, mimeType: 'audio/wav' }] }));

    server.registerTool('test_embedded_resource', { description: 'Answers an embedded text resource' },
        async () => ({
            content: [{
                type: 'resource',
                resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' }
            }]
        }));

    server.registerTool('test_multiple_content_types', { description: 'Answers text, an image and a resource together' },
        async () => ({
            content: [
                text('Multiple content types test:'),
                { type: 'image', data: RED_PIXEL_PNG, mimeType: 'image/png' },
                {
                    type: 'resource',
                    resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json', text: JSON.stringify({ test: 'data', value: 123 }) }
                }
            ]
        }));

    server.registerTool('test_tool_with_logging', { description: 'Logs three info messages while it runs' },
        async (ctx) =>
        {
            await ctx.mcpReq.log('info', 'Tool execution started');
            await sleep(STEP_MS);
            await ctx.mcpReq.log('info', 'Tool processing data');
            await sleep(STEP_MS);
            await ctx.mcpReq.log('info', 'Tool execution completed');
            return { content: [text('Logging tool finished after three messages')] };
        });

    server.registerTool('test_error_handling', { description: 'Always fails' },
        async () =>
        {
            // The SDK turns a thrown error into a tool result with isError: true, as the scenario wants.
            throw new Error('This tool intentionally returns an error for testing');
        });

    server.registerTool('test_tool_with_progress', { description: 'Reports progress 0, 50 and 100 of 100' },
        async (ctx) =>
        {
            const token = ctx.mcpReq._meta?.progressToken;
            for (const progress of [0, 50, 100])
            {
                if (token !== undefined)
                    await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress, total: 100 } });
                if (progress < 100)
                    await sleep(STEP_MS);
            }
            return { content: [text('Progress tool finished')] };
        });

    server.registerTool('json_schema_2020_12_tool', {
        description: 'Tool with JSON Schema 2020-12 features',
        inputSchema: fromJsonSchema(JSON_SCHEMA_2020_12)
    }, async (args) => ({ content: [text('Received ' + JSON.stringify(args))] }));

    if (era === 'legacy')
        registerPushStyleTools(server);
    else
        registerInputRequiredTools(server);
}

/**
 * Sends a request to the client on the stream of the call it serves (as the official reference
 * server does), not on the session's GET stream: a request sent there while the client has not
 * opened it yet is dropped by the SDK.
 */
function onThisCall(ctx)
{
    return { relatedRequestId: ctx.mcpReq.id };
}

/** 2025 era: the server sends requests to the client while the tool call is open. */
function registerPushStyleTools(server)
{
    server.registerTool('test_sampling', { description: 'Asks the client to sample', inputSchema: { prompt: z.string() } },
        async ({ prompt }, ctx) =>
        {
            const answer = await ctx.mcpReq.requestSampling({ messages: [{ role: 'user', content: text(prompt) }], maxTokens: 100 }, onThisCall(ctx));
            const said = answer.content?.type === 'text' ? answer.content.text : JSON.stringify(answer.content);
            return { content: [text('LLM response: ' + said)] };
        });

    server.registerTool('test_elicitation', { description: 'Asks the user for a name and an address', inputSchema: { message: z.string() } },
        async ({ message }, ctx) =>
        {
            const answer = await ctx.mcpReq.elicitInput({
                message,
                requestedSchema: {
                    type: 'object',
                    properties: {
                        username: { type: 'string', description: 'User\'s response' },
                        email: { type: 'string', description: 'User\'s email address' }
                    },
                    required: ['username', 'email']
                }
            }, onThisCall(ctx));
            return { content: [text('User response: ' + JSON.stringify(answer))] };
        });

    server.registerTool('test_elicitation_sep1034_defaults', { description: 'Elicits with a default for each primitive type' },
        async (ctx) =>
        {
            const answer = await ctx.mcpReq.elicitInput({
                message: 'Confirm or change the defaults',
                requestedSchema: {
                    type: 'object',
                    properties: {
                        name: { type: 'string', default: 'John Doe' },
                        age: { type: 'integer', default: 30 },
                        score: { type: 'number', default: 95.5 },
                        status: { type: 'string', enum: ['active', 'inactive', 'pending'], default: 'active' },
                        verified: { type: 'boolean', default: true }
                    }
                }
            }, onThisCall(ctx));
            return { content: [text(`Elicitation completed: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`)] };
        });

    server.registerTool('test_elicitation_sep1330_enums', { description: 'Elicits with each of the five enum shapes' },
        async (ctx) =>
        {
            const answer = await ctx.mcpReq.elicitInput({
                message: 'Pick options',
                requestedSchema: {
                    type: 'object',
                    properties: {
                        untitledSingle: { type: 'string', enum: ['option1', 'option2', 'option3'] },
                        titledSingle: {
                            type: 'string',
                            oneOf: [{ const: 'value1', title: 'First Option' }, { const: 'value2', title: 'Second Option' }, { const: 'value3', title: 'Third Option' }]
                        },
                        legacyEnum: { type: 'string', enum: ['opt1', 'opt2', 'opt3'], enumNames: ['Option One', 'Option Two', 'Option Three'] },
                        untitledMulti: { type: 'array', items: { type: 'string', enum: ['option1', 'option2', 'option3'] } },
                        titledMulti: {
                            type: 'array',
                            items: { anyOf: [{ const: 'value1', title: 'First Choice' }, { const: 'value2', title: 'Second Choice' }, { const: 'value3', title: 'Third Choice' }] }
                        }
                    }
                }
            }, onThisCall(ctx));
            return { content: [text(`Elicitation completed: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`)] };
        });

    server.registerTool('test_reconnection', { description: 'Closes its SSE stream mid-call; the answer arrives on the resumed stream' },
        async (ctx) =>
        {
            // Needs the event store: the client resumes with Last-Event-ID and gets the result then.
            ctx.http?.closeSSE?.();
            await sleep(2 * STEP_MS);
            return { content: [text('Reconnection test finished')] };
        });
}

/** 2026-07-28: no server-to-client requests; the tool answers input_required and is called again. */
function registerInputRequiredTools(server)
{
    server.registerTool('test_input_required_result_elicitation', { description: 'Asks the user for a name, then greets them' },
        async (ctx) =>
        {
            const answer = inputResponse(ctx.mcpReq.inputResponses, 'user_name');
            if (answer.kind !== 'elicit')
            {
                return inputRequired({
                    inputRequests: {
                        user_name: inputRequired.elicit({
                            message: 'What is your name?',
                            requestedSchema: z.object({ name: z.string() })
                        })
                    }
                });
            }
            return { content: [text(`Hello, ${answer.content?.name}!`)] };
        });

    server.registerTool('test_input_required_result_sampling', { description: 'Asks the client to sample, then answers with the sample' },
        async (ctx) =>
        {
            const answer = inputResponse(ctx.mcpReq.inputResponses, 'capital_question');
            if (answer.kind !== 'sampling')
            {
                return inputRequired({
                    inputRequests: {
                        capital_question: inputRequired.createMessage({
                            messages: [{ role: 'user', content: text('What is the capital of France?') }],
                            maxTokens: 100
                        })
                    }
                });
            }
            const content = answer.result.content;
            return { content: [text(content?.type === 'text' ? content.text : JSON.stringify(content))] };
        });

    server.registerTool('test_input_required_result_list_roots', { description: 'Asks the client for its roots, then lists them' },
        async (ctx) =>
        {
            const answer = inputResponse(ctx.mcpReq.inputResponses, 'client_roots');
            if (answer.kind !== 'roots')
                return inputRequired({ inputRequests: { client_roots: inputRequired.listRoots() } });
            return { content: [text('Roots: ' + answer.roots.map(r => r.uri).join(', '))] };
        });
}

const JSON_SCHEMA_2020_12 = {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    $defs: {
        address: { $anchor: 'addressDef', type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } }
    },
    properties: {
        name: { type: 'string' },
        address: { $ref: '#/$defs/address' },
        contactMethod: { type: 'string', enum: ['phone', 'email'] },
        phone: { type: 'string' },
        email: { type: 'string' }
    },
    allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
    if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
    then: { required: ['phone'] },
    else: { required: ['email'] },
    additionalProperties: false
};

function registerResources(server)
{
    server.registerResource('static-text', 'test://static-text',
        { description: 'A fixed text resource', mimeType: 'text/plain' },
        async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'This is the content of the static text resource.' }] }));

    server.registerResource('static-binary', 'test://static-binary',
        { description: 'A fixed PNG resource', mimeType: 'image/png' },
        async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'image/png', blob: RED_PIXEL_PNG }] }));

    server.registerResource('watched-resource', 'test://watched-resource',
        { description: 'A resource clients may subscribe to', mimeType: 'text/plain' },
        async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'Watched resource content.' }] }));

    server.registerResource('template-data', new ResourceTemplate('test://template/{id}/data', { list: undefined }),
        { description: 'Data for the id in the URI', mimeType: 'application/json' },
        async (uri, { id }) => ({
            contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }) }]
        }));

    // McpServer has no subscription bookkeeping of its own; a subscription here is only
    // acknowledged, since nothing ever changes the watched resource.
    const subscribed = new Set();
    server.server.setRequestHandler('resources/subscribe', async (request) =>
    {
        subscribed.add(request.params.uri);
        return {};
    });
    server.server.setRequestHandler('resources/unsubscribe', async (request) =>
    {
        subscribed.delete(request.params.uri);
        return {};
    });
}

function registerPrompts(server)
{
    server.registerPrompt('test_simple_prompt', { description: 'A prompt without arguments' },
        async () => ({ messages: [{ role: 'user', content: text('This is a simple prompt for testing.') }] }));

    server.registerPrompt('test_prompt_with_arguments', {
        description: 'A prompt with two arguments',
        argsSchema: {
            arg1: completable(z.string().describe('First test argument'), value => ['paris', 'park', 'party'].filter(v => v.startsWith(value))),
            arg2: z.string().describe('Second test argument')
        }
    }, async ({ arg1, arg2 }) => ({ messages: [{ role: 'user', content: text(`Prompt with arguments: arg1='${arg1}', arg2='${arg2}'`) }] }));

    server.registerPrompt('test_prompt_with_embedded_resource', {
        description: 'A prompt that embeds the resource it is given',
        argsSchema: { resourceUri: z.string().describe('URI of the resource to embed') }
    }, async ({ resourceUri }) => ({
        messages: [
            { role: 'user', content: { type: 'resource', resource: { uri: resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' } } },
            { role: 'user', content: text('Please process the embedded resource above.') }
        ]
    }));

    server.registerPrompt('test_prompt_with_image', { description: 'A prompt with an image' },
        async () => ({
            messages: [
                { role: 'user', content: { type: 'image', data: RED_PIXEL_PNG, mimeType: 'image/png' } },
                { role: 'user', content: text('Please analyze the image above.') }
            ]
        }));
}

/** Events of every 2025 session, kept so that a client may resume a stream with Last-Event-ID. */
class MemoryEventStore
{
    #events = new Map();
    #next = 0;

    async storeEvent(streamId, message)
    {
        const eventId = `${streamId}_${++this.#next}`;
        this.#events.set(eventId, { streamId, message });
        return eventId;
    }

    async getStreamIdForEventId(eventId)
    {
        return this.#events.get(eventId)?.streamId;
    }

    async replayEventsAfter(lastEventId, { send })
    {
        const last = this.#events.get(lastEventId);
        if (!last)
            return '';
        let after = false;
        for (const [eventId, event] of this.#events)
        {
            if (after && event.streamId === last.streamId)
                await send(eventId, event.message);
            if (eventId === lastEventId)
                after = true;
        }
        return last.streamId;
    }
}

const eventStore = new MemoryEventStore();
/** 2025 sessions by Mcp-Session-Id. */
const sessions = new Map();
const modern = createMcpHandler(() => buildServer('modern'), { legacy: 'reject' });
const observed = [];

function jsonRpcError(status, code, message)
{
    return Response.json({ jsonrpc: '2.0', id: null, error: { code, message } }, { status });
}

async function serveLegacy(request)
{
    const sessionId = request.headers.get('mcp-session-id');
    if (sessionId)
    {
        const transport = sessions.get(sessionId);
        return transport ? transport.handleRequest(request) : jsonRpcError(404, -32001, 'Session not found');
    }
    const body = request.method === 'POST' ? await request.clone().json().catch(() => undefined) : undefined;
    if (!isInitializeRequest(body))
        return jsonRpcError(400, -32000, 'Bad Request: no Mcp-Session-Id, and not an initialize request');
    const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        eventStore,
        retryInterval: 500,
        onsessioninitialized: id => { sessions.set(id, transport); },
        onsessionclosed: id => { sessions.delete(id); }
    });
    transport.onclose = () =>
    {
        if (transport.sessionId)
            sessions.delete(transport.sessionId);
    };
    await buildServer('legacy').connect(transport);
    return transport.handleRequest(request);
}

async function serveMcp(request)
{
    // Origin and Host checks first: a server on loopback must refuse DNS rebinding by itself.
    const rejected = hostHeaderValidationResponse(request, localhostAllowedHostnames())
        ?? originValidationResponse(request, localhostAllowedOrigins());
    if (rejected)
        return rejected;
    observed.push({
        method: request.method,
        protocolVersion: request.headers.get('mcp-protocol-version'),
        mcpMethod: request.headers.get('mcp-method'),
        session: request.headers.has('mcp-session-id'),
        paramHeaders: [...request.headers.keys()].filter(name => name.startsWith('mcp-param-'))
    });
    return await isLegacyRequest(request) ? serveLegacy(request) : modern.fetch(request);
}

async function handle(req, res)
{
    const url = new URL(req.url, `http://${req.headers.host ?? '127.0.0.1'}`);
    if (url.pathname === OBSERVED_PATH)
    {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(observed));
        return;
    }
    if (url.pathname !== MCP_PATH)
    {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
        return;
    }
    await respond(req, res, url, serveMcp);
}

const port = Number(process.argv[2] ?? process.env.PORT ?? 0);
const http = createServer((req, res) =>
{
    handle(req, res).catch(error =>
    {
        process.stderr.write(`reference-server: ${error.stack ?? error}\n`);
        if (!res.headersSent)
            res.writeHead(500, { 'content-type': 'text/plain' });
        res.end();
    });
});
http.listen(port, '127.0.0.1', () => process.stdout.write(`listening http://127.0.0.1:${http.address().port}${MCP_PATH}\n`));

for (const signal of ['SIGTERM', 'SIGINT'])
{
    process.on(signal, () =>
    {
        http.closeAllConnections();
        http.close(() => process.exit(0));
    });
}
