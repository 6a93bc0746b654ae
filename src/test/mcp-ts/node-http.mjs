// node:http to the SDK's web-standard Request and Response, streaming both ways: the MCP servers
// of these tests (reference-server.mjs, paged-server.mjs) serve their endpoint through it.

import { Readable } from 'node:stream';

/** Answers a node:http request with what `serve` answers for it as a web-standard Request. */
export async function respond(req, res, url, serve)
{
    const aborted = new AbortController();
    res.on('close', () => aborted.abort());
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
    const request = new Request(url, {
        method: req.method,
        headers: Object.entries(req.headers).flatMap(([name, value]) => (Array.isArray(value) ? value : [value]).map(v => [name, v])),
        body: hasBody ? Readable.toWeb(req) : undefined,
        duplex: hasBody ? 'half' : undefined,
        signal: aborted.signal
    });
    const response = await serve(request);
    res.writeHead(response.status, [...response.headers].flat());
    if (!response.body)
    {
        res.end();
        return;
    }
    res.flushHeaders();
    try
    {
        for await (const chunk of response.body)
            res.write(chunk);
    }
    catch
    {
        // The client went away, or the SDK ended the stream: nothing left to write to.
    }
    res.end();
}
