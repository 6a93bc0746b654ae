// The official TypeScript MCP SDK client (1.x), unmodified, as an application that holds OAuth client
// credentials uses it: ClientCredentialsProvider is the transport's authProvider, so the SDK itself
// reads the endpoint's 401 (WWW-Authenticate: Bearer resource_metadata=...), fetches the RFC 9728
// protected-resource metadata and the authorization server's RFC 8414 metadata, obtains a token by
// client credentials with the RFC 8707 resource parameter, and retries with it. TypeScriptSdkOAuthIT
// runs it through the gateway against AuthorizationServerDouble; what the SDK asks of the endpoint is
// written down in the class comment of AuthorizationServerDouble.
//
//   node oauth-client.mjs <streamable|sse> <url> <clientId> <clientSecret> [scope]
//                         [--issuer=<authorization server URL>] [--refused=<tool>] [--calls=<n>]
//
// scope:     what the provider asks the token endpoint for ("-" or absent: none, the server's default)
// --issuer:  the provider's expectedIssuer; the SDK then sends the credentials to no other server
// --refused: a tool that must be refused (a JSON-RPC error, an HTTP error or an isError result)
// --calls:   echo calls, each {text: "hello <i>"} whose answer must contain "hello" (default 5)
//
// It runs connect (initialize), tools/list, the echo calls, the refused call if asked, and closes (a
// Streamable HTTP session is ended with DELETE first). On success it prints one JSON line and exits
// 0; on any mismatch or error it prints the message on stderr, the JSON line with "ok": false, and
// exits 1 (2: bad usage, 3: the hard timeout). The line tells what the SDK did over HTTP, seen
// through the transport's fetch option: responses of the MCP endpoint by status and their
// WWW-Authenticate headers, metadata URLs in the order fetched, token requests (grant_type, scope,
// resource, client authentication; never the secret) and the claims of the token it ended with
// (never the token). Each step is logged on stderr as "step <name> at <ms> ms" as it starts.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const HARD_TIMEOUT_MS = 60_000;
const REQUEST_TIMEOUT_MS = 15_000;

const started = Date.now();
const report = {
    ok: false,
    transport: null,
    url: null,
    step: 'start',
    serverName: null,
    sessionId: null,
    tools: [],
    echoCalls: 0,
    echoMatched: 0,
    refused: null,
    endpointStatuses: {},
    wwwAuthenticate: [],
    metadataFetches: [],
    tokenRequests: [],
    token: null,
    transportErrors: [],
    elapsedMs: 0
};

function step(name) {
    report.step = name;
    process.stderr.write(`step ${name} at ${Date.now() - started} ms\n`);
}

function finish(code, message) {
    report.elapsedMs = Date.now() - started;
    if (message) {
        report.error = message;
        process.stderr.write(`oauth-client.mjs: ${message}\n`);
    }
    process.stdout.write(JSON.stringify(report) + '\n', () => process.exit(code));
}

class Mismatch extends Error {}

function usage() {
    process.stderr.write('usage: node oauth-client.mjs <streamable|sse> <url> <clientId> <clientSecret> [scope] '
        + '[--issuer=<url>] [--refused=<tool>] [--calls=<n>]\n');
    process.exit(2);
}

function parseArgs(argv) {
    const options = {};
    const positional = [];
    for (const arg of argv) {
        const option = /^--(issuer|refused|calls)=(.*)$/.exec(arg);
        if (option) {
            options[option[1]] = option[2];
        } else if (arg.startsWith('--')) {
            usage();
        } else {
            positional.push(arg);
        }
    }
    const [kind, url, clientId, clientSecret, scope] = positional;
    if (!['sse', 'streamable'].includes(kind) || !url || !clientId || !clientSecret || positional.length > 5) {
        usage();
    }
    const calls = options.calls === undefined ? 5 : Number(options.calls);
    if (!Number.isInteger(calls) || calls < 0) {
        usage();
    }
    return { kind, url, clientId, clientSecret, scope: scope && scope !== '-' ? scope : undefined, calls, ...options };
}

function headerOf(headers, name) {
    if (!headers) {
        return null;
    }
    if (headers instanceof Headers) {
        return headers.get(name);
    }
    const entry = Object.entries(headers).find(([key]) => key.toLowerCase() === name);
    return entry ? entry[1] : null;
}

// The claims of a JWT access token, for the report; an opaque token has none to show.
function claimsOf(accessToken) {
    try {
        const { iss, sub, aud, scope, client_id, exp } = JSON.parse(Buffer.from(accessToken.split('.')[1], 'base64url').toString());
        return { iss, sub, aud, scope, client_id, exp };
    } catch {
        return { opaque: true };
    }
}

// Watches what the SDK sends and receives, and changes nothing: every request goes out as the SDK made it.
function watchingFetch(endpoint) {
    return async (input, init) => {
        const url = new URL(input instanceof Request ? input.url : String(input));
        const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
        const body = init?.body;
        const response = await fetch(input, init);
        if (url.pathname.includes('/.well-known/')) {
            report.metadataFetches.push(`${method} ${url.href} -> ${response.status}`);
        } else if (body instanceof URLSearchParams && body.has('grant_type')) {
            const authorization = headerOf(init?.headers, 'authorization');
            report.tokenRequests.push({
                url: url.href,
                status: response.status,
                grant_type: body.get('grant_type'),
                scope: body.get('scope'),
                resource: body.getAll('resource'),
                clientAuthentication: authorization?.startsWith('Basic ') ? 'client_secret_basic'
                    : body.has('client_secret') ? 'client_secret_post' : 'none'
            });
        } else if (url.origin === endpoint.origin) {
            const key = `${method} ${response.status}`;
            report.endpointStatuses[key] = (report.endpointStatuses[key] ?? 0) + 1;
            const challenge = response.headers.get('www-authenticate');
            if (challenge && !report.wwwAuthenticate.includes(challenge)) {
                report.wwwAuthenticate.push(challenge);
            }
        }
        return response;
    };
}

function textOf(result) {
    return (result?.content ?? []).filter(c => c.type === 'text').map(c => c.text).join('\n');
}

async function main() {
    const args = parseArgs(process.argv.slice(2));
    report.transport = args.kind;
    report.url = args.url;
    const url = new URL(args.url);

    const hardTimeout = setTimeout(
        () => finish(3, `hard timeout: not done after ${HARD_TIMEOUT_MS} ms (last step: ${report.step})`),
        HARD_TIMEOUT_MS);
    hardTimeout.unref();

    const provider = new ClientCredentialsProvider({
        clientId: args.clientId,
        clientSecret: args.clientSecret,
        scope: args.scope,
        ...(args.issuer ? { expectedIssuer: args.issuer } : {})
    });
    const client = new Client({ name: 'sandgate-ts-oauth-check', version: '1.0.0' });
    client.onerror = error => report.transportErrors.push(`${report.step}: ${error?.message ?? error}`);
    const options = { authProvider: provider, fetch: watchingFetch(url) };
    const transport = args.kind === 'sse' ? new SSEClientTransport(url, options) : new StreamableHTTPClientTransport(url, options);
    const requestOptions = { timeout: REQUEST_TIMEOUT_MS };

    try {
        step('initialize');
        await client.connect(transport, requestOptions);
        report.serverName = client.getServerVersion()?.name ?? null;
        report.sessionId = transport.sessionId ?? null;

        step('tools/list');
        report.tools = (await client.listTools(undefined, requestOptions)).tools.map(t => t.name).sort();
        if (!report.tools.includes('echo')) {
            throw new Mismatch(`tools/list: no echo among ${JSON.stringify(report.tools)}`);
        }

        for (let i = 0; i < args.calls; i++) {
            step(`tools/call echo #${i}`);
            const result = await client.callTool({ name: 'echo', arguments: { text: `hello ${i}` } }, undefined, requestOptions);
            report.echoCalls++;
            const text = textOf(result);
            if (result.isError || !text.includes('hello')) {
                throw new Mismatch(`tools/call echo #${i}: expected an answer with "hello" but got ${JSON.stringify(result)}`);
            }
            report.echoMatched++;
        }

        if (args.refused) {
            step(`tools/call ${args.refused} (to be refused)`);
            report.refused = { tool: args.refused, refused: false };
            try {
                const result = await client.callTool({ name: args.refused, arguments: {} }, undefined, requestOptions);
                if (result.isError) {
                    Object.assign(report.refused, { refused: true, isError: true, message: textOf(result) });
                }
            } catch (error) {
                Object.assign(report.refused, { refused: true, code: error?.code ?? null, message: error?.message ?? String(error), data: error?.data ?? null });
            }
            if (!report.refused.refused) {
                throw new Mismatch(`tools/call ${args.refused}: expected a refusal but the call succeeded`);
            }
        }

        if (args.kind === 'streamable') {
            step('DELETE session');
            await transport.terminateSession();
        }
        step('close');
        await client.close();
        step('done');
        report.ok = true;
    } finally {
        const tokens = provider.tokens();
        report.token = tokens?.access_token ? claimsOf(tokens.access_token) : null;
    }
}

main().then(
    () => finish(0),
    error => finish(1, error instanceof Mismatch
        ? `mismatch: ${error.message}`
        : `failed at ${report.step}: ${error?.stack ?? error}${error?.cause ? `\n  cause: ${error.cause?.stack ?? error.cause}` : ''}`));
