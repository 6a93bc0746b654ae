// Preloaded with `node --import ./bearer.mjs` when the gateway under test authenticates its MCP
// callers: the conformance CLI has no option for a request header, so this gives every request it
// makes (through fetch, node:http or undici's request) the bearer token in
// SANDGATE_CONFORMANCE_TOKEN, unless the request sets Authorization itself. Nothing else about the
// requests changes.
import http from 'node:http';
import { createRequire, syncBuiltinESMExports } from 'node:module';

const token = process.env.SANDGATE_CONFORMANCE_TOKEN;
if (token) {
    const authorization = `Bearer ${token}`;
    const originalFetch = globalThis.fetch;
    globalThis.fetch = (input, init = {}) => {
        const headers = new Headers(init.headers ?? (input instanceof Request ? input.headers : undefined));
        if (!headers.has('authorization'))
            headers.set('authorization', authorization);
        return originalFetch(input, { ...init, headers });
    };
    const originalRequest = http.request;
    http.request = (...args) => {
        const options = args.find(arg => arg && typeof arg === 'object' && !(arg instanceof URL) && typeof arg !== 'function');
        if (options) {
            options.headers = { ...(options.headers ?? {}) };
            if (!Object.keys(options.headers).some(name => name.toLowerCase() === 'authorization'))
                options.headers.authorization = authorization;
        }
        return originalRequest(...args);
    };
    // Named imports of node:http (import { request } from ...) see the patched function too.
    syncBuiltinESMExports();
    // The DNS-rebinding scenario sends its own Host header, which fetch forbids, through undici's
    // request. undici is CommonJS: an ESM import of it reads module.exports when the importer is
    // linked, after this preload, so patching the cached exports reaches `import { request }`.
    let undici = null;
    try {
        undici = createRequire(import.meta.url)('undici');
    } catch {
        // The suite's version without undici: nothing to patch.
    }
    if (undici) {
        const originalUndiciRequest = undici.request;
        undici.request = (url, options = {}, ...rest) => {
            // Header lists and Headers objects are left as they are: the suite sends plain objects.
            if (options.headers !== undefined && (typeof options.headers !== 'object' || typeof options.headers[Symbol.iterator] === 'function'))
                return originalUndiciRequest(url, options, ...rest);
            const headers = { ...(options.headers ?? {}) };
            if (!Object.keys(headers).some(name => name.toLowerCase() === 'authorization'))
                headers.authorization = authorization;
            return originalUndiciRequest(url, { ...options, headers }, ...rest);
        };
    }
}
