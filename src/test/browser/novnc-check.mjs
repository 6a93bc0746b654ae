#!/usr/bin/env node
// Opens noVNC pages in a real headless Chromium (Debian's, through playwright-core) and waits until
// each tab's noVNC canvas shows an expected solid colour over a live connection; then, optionally,
// plays what a hostile script on one tab's page would try against another sandbox.
//
//   node novnc-check.mjs [--timeout-ms 30000] [--chromium /usr/bin/chromium]
//                        [--visit URL ...]
//                        [--tab URL COLOUR SCREENSHOT.png ...]
//                        [--probe TAB fetch|websocket URL ...]
//
// COLOUR is a hex RGB colour such as ff0000. Everything happens in ONE browser context (one cookie
// jar), as a person with several tabs would. Each --visit URL is opened first, in order, in a page
// of its own that is closed again (to redeem a grant, or to let a sandbox answer with its headers).
// Then all tabs are opened at once. A tab passes when noVNC reports itself connected, its
// WebSocket is open, and every sampled canvas pixel is within a small tolerance of COLOUR; then all
// tabs are checked once more together, so they are shown to work side by side. A tab whose
// WebSockets have all closed without a connection is given up on after 2 s.
// Each --probe then runs in tab number TAB (0 is the first) as the page's own script: a fetch() of
// URL with the page's credentials, or a new WebSocket(URL); it reports whether the page could read
// the response or open the socket, and which policy violations the page saw.
//
// Prints one JSON object on stdout (per tab: state, canvas size, sampled colours, the WebSocket
// URLs the page opened before any probe and failed HTTP responses; the visits' statuses; the
// probes' outcomes; the cookie jar at the end) and saves one screenshot per tab. Exit status:
// 0 all tabs passed, 1 a tab failed or the deadline passed, 2 bad usage or no browser.
// It never downloads a browser: Chromium must be installed (apt-get install chromium).

import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { chromium } from 'playwright-core';
import { GRID, TOLERANCE, hex, probePage } from './novnc-canvas.mjs';

const CHROMIUM_ARGS = [
    '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
    '--disable-component-update', '--no-first-run', '--disable-sync', '--disable-quic',
];
const POLL_MS = 100;
const GIVE_UP_GRACE_MS = 2000; // how long a tab whose WebSockets all closed may take to open another

function usage(message) {
    process.stderr.write(`novnc-check: ${message}\n`
        + 'usage: node novnc-check.mjs [--timeout-ms N] [--chromium PATH] [--visit URL ...] [--tab URL COLOUR SCREENSHOT ...]'
        + ' [--probe TAB fetch|websocket URL ...]\n');
    process.exit(2);
}

function parseArgs(argv) {
    const options = { timeoutMs: 30_000, chromium: '/usr/bin/chromium', visits: [], tabs: [], probes: [] };
    for (let i = 0; i < argv.length; i++) {
        const arg = argv[i];
        if (arg === '--timeout-ms') {
            options.timeoutMs = Number(argv[++i]);
            if (!Number.isFinite(options.timeoutMs) || options.timeoutMs <= 0)
                usage(`bad --timeout-ms ${argv[i]}`);
        } else if (arg === '--chromium') {
            options.chromium = argv[++i];
        } else if (arg === '--visit') {
            if (argv[i + 1] === undefined)
                usage('--visit needs URL');
            options.visits.push(argv[++i]);
        } else if (arg === '--probe') {
            const [tab, kind, url] = argv.slice(i + 1, i + 4);
            i += 3;
            if (url === undefined || !/^\d+$/.test(tab) || !['fetch', 'websocket'].includes(kind))
                usage('--probe needs TAB fetch|websocket URL');
            options.probes.push({ tab: Number(tab), kind, url });
        } else if (arg === '--tab') {
            const [url, colour, screenshot] = argv.slice(i + 1, i + 4);
            i += 3;
            if (screenshot === undefined)
                usage('--tab needs URL COLOUR SCREENSHOT');
            if (!/^#?[0-9a-fA-F]{6}$/.test(colour))
                usage(`bad colour ${colour} (expected hex RGB such as ff0000)`);
            const hex = colour.replace('#', '');
            options.tabs.push({
                url, screenshot, colour: hex.toLowerCase(),
                rgb: [0, 2, 4].map(k => parseInt(hex.slice(k, k + 2), 16)),
            });
        } else {
            usage(`unknown argument ${arg}`);
        }
    }
    if (options.tabs.length === 0 && options.visits.length === 0)
        usage('no --tab and no --visit given');
    if (options.probes.some(p => p.tab >= options.tabs.length))
        usage('--probe names a tab that is not given');
    return options;
}

// Runs in the page, as its own script would: can it read URL with the page's credentials?
async function fetchFrom(url) {
    const violations = [];
    const seen = e => violations.push({ blockedURI: e.blockedURI, directive: e.effectiveDirective });
    document.addEventListener('securitypolicyviolation', seen);
    try {
        const response = await fetch(url, { credentials: 'include' });
        const body = await response.text();
        return { outcome: 'read', status: response.status, body: body.slice(0, 200), violations };
    } catch (e) {
        return { outcome: 'blocked', error: String(e), violations };
    } finally {
        // Violation reports are queued as tasks: let them arrive.
        await new Promise(r => setTimeout(r, 100));
        document.removeEventListener('securitypolicyviolation', seen);
    }
}

// Runs in the page, as its own script would: can it open a WebSocket to URL? Chromium neither
// throws nor closes a socket its policy blocks: the violation report is the answer.
function webSocketFrom(url) {
    return new Promise(resolve => {
        const violations = [];
        let settled = false;
        let timer;
        const done = result => {
            if (settled)
                return;
            settled = true;
            clearTimeout(timer);
            setTimeout(() => {
                document.removeEventListener('securitypolicyviolation', seen);
                resolve({ ...result, violations });
            }, 100);
        };
        const seen = e => {
            violations.push({ blockedURI: e.blockedURI, directive: e.effectiveDirective });
            done({ outcome: 'blocked' });
        };
        document.addEventListener('securitypolicyviolation', seen);
        let socket;
        try {
            socket = new WebSocket(url);
        } catch (e) {
            done({ outcome: 'blocked', error: String(e) });
            return;
        }
        timer = setTimeout(() => { socket.close(); done({ outcome: 'no answer' }); }, 5000);
        socket.onopen = () => { socket.close(); done({ outcome: 'opened' }); };
        socket.onclose = e => done({ outcome: 'refused', code: e.code });
    });
}

function evaluateProbe(tab, probe) {
    const openSockets = tab.websockets.filter(w => !w.closed);
    const wrong = probe.samples.filter(s =>
        s.rgba[3] !== 255 || s.rgba.slice(0, 3).some((v, k) => Math.abs(v - tab.rgb[k]) > TOLERANCE));
    const problems = [];
    if (probe.state !== 'connected')
        problems.push(`noVNC state is ${probe.state}${probe.status ? ` (${probe.status})` : ''}`);
    if (openSockets.length === 0)
        problems.push(tab.websockets.length === 0 ? 'no WebSocket was opened' : 'no WebSocket is open');
    if (!probe.canvas)
        problems.push('no noVNC canvas with a size');
    else if (wrong.length > 0)
        problems.push(`${wrong.length}/${probe.samples.length} sampled pixels are not #${tab.colour}, e.g. #${hex(wrong[0].rgba)} at ${wrong[0].x},${wrong[0].y}`);
    return problems;
}

// Every WebSocket the page opened is closed and noVNC is not connected: the tab will not recover.
function hasGivenUp(tab, probe) {
    return probe.state !== 'connected' && tab.websockets.length > 0 && tab.websockets.every(w => w.closed);
}

function summarise(tab) {
    const probe = tab.lastProbe || { state: 'not loaded', samples: [] };
    const colours = {};
    for (const s of probe.samples) {
        const key = hex(s.rgba);
        colours[key] = (colours[key] || 0) + 1;
    }
    return {
        url: tab.url,
        expected: tab.colour,
        ok: tab.problems.length === 0,
        problems: tab.problems,
        state: probe.state,
        status: probe.status,
        canvas: probe.canvas,
        sampledColours: colours,
        websockets: tab.websockets.slice(0, tab.websocketsBeforeProbes ?? tab.websockets.length)
            .map(w => ({ url: w.url, closed: w.closed, framesReceived: w.framesReceived, error: w.error })),
        httpErrors: tab.httpErrors,
        consoleErrors: tab.consoleErrors.slice(0, 10),
        screenshot: tab.screenshotSaved ? tab.screenshot : null,
        millisToPass: tab.millisToPass ?? null,
    };
}

async function main() {
    const options = parseArgs(process.argv.slice(2));
    if (!existsSync(options.chromium)) {
        process.stderr.write(`novnc-check: ${options.chromium} not found; install it with: apt-get install chromium`
            + ' (scripts/test.sh does). This script never downloads a browser.\n');
        process.exit(2);
    }
    const started = Date.now();
    const deadline = started + options.timeoutMs;
    let browser;
    let finished = false;
    // Hard stop: whatever hangs (launch, navigation, close), the process ends shortly after the deadline.
    const watchdog = setTimeout(() => {
        if (!finished) {
            process.stderr.write(`novnc-check: gave up after ${options.timeoutMs + 5000} ms (hard deadline)\n`);
            process.stdout.write(JSON.stringify({ ok: false, error: 'hard deadline exceeded' }) + '\n');
            process.exit(1);
        }
    }, options.timeoutMs + 5000);
    watchdog.unref();

    const tabs = options.tabs.map(t => ({
        ...t, websockets: [], httpErrors: [], consoleErrors: [], problems: ['not checked'], lastProbe: null,
    }));
    let error = null;
    const visits = [];
    const probes = [];
    let cookies = [];
    try {
        browser = await chromium.launch({
            executablePath: options.chromium,
            headless: true,
            chromiumSandbox: false,
            args: CHROMIUM_ARGS,
            timeout: Math.max(1000, deadline - Date.now()),
        });
        const context = await browser.newContext({ viewport: { width: 800, height: 600 } });
        for (const url of options.visits) {
            const page = await context.newPage();
            const response = await page.goto(url, { waitUntil: 'load', timeout: Math.max(1000, deadline - Date.now()) });
            visits.push({ url, status: response ? response.status() : null, finalUrl: page.url() });
            await page.close();
        }
        for (const tab of tabs) {
            const page = await context.newPage();
            tab.page = page;
            page.on('websocket', ws => {
                const record = { url: ws.url(), closed: false, framesReceived: 0, error: null };
                tab.websockets.push(record);
                ws.on('framereceived', () => { record.framesReceived++; });
                ws.on('socketerror', e => { record.error = String(e); });
                ws.on('close', () => { record.closed = true; });
            });
            page.on('response', r => {
                if (r.status() >= 400)
                    tab.httpErrors.push(`${r.status()} ${r.request().method()} ${r.url()}`);
            });
            page.on('requestfailed', r => tab.httpErrors.push(`failed ${r.url()}: ${r.failure()?.errorText}`));
            page.on('console', m => { if (m.type() === 'error') tab.consoleErrors.push(m.text()); });
            page.on('pageerror', e => tab.consoleErrors.push(String(e)));
        }
        // Every tab loads at the same time, sharing the context's cookies.
        await Promise.all(tabs.map(tab =>
            tab.page.goto(tab.url, { waitUntil: 'load', timeout: Math.max(1000, deadline - Date.now()) })));

        const pending = new Set(tabs);
        while (pending.size > 0 && Date.now() < deadline) {
            for (const tab of [...pending]) {
                tab.lastProbe = await tab.page.evaluate(probePage, GRID);
                tab.problems = evaluateProbe(tab, tab.lastProbe);
                if (tab.problems.length === 0) {
                    tab.millisToPass = Date.now() - started;
                    pending.delete(tab);
                } else if (hasGivenUp(tab, tab.lastProbe)) {
                    // Neither noVNC version retries by default: waiting out the deadline would only slow the failure.
                    tab.deadSince ??= Date.now();
                    if (Date.now() - tab.deadSince >= GIVE_UP_GRACE_MS)
                        pending.delete(tab);
                } else {
                    tab.deadSince = undefined;
                }
            }
            if (pending.size > 0)
                await new Promise(r => setTimeout(r, POLL_MS));
        }
        // All tabs together, once more: each still shows its own sandbox while the others are live.
        for (const tab of tabs) {
            tab.lastProbe = await tab.page.evaluate(probePage, GRID);
            tab.problems = evaluateProbe(tab, tab.lastProbe);
            tab.websocketsBeforeProbes = tab.websockets.length;
        }
        // What a hostile script on a tab's page could reach, now that every tab is live.
        for (const probe of options.probes) {
            const page = tabs[probe.tab].page;
            const result = await page.evaluate(probe.kind === 'fetch' ? fetchFrom : webSocketFrom, probe.url);
            probes.push({ ...probe, ...result });
        }
        // And the tabs still work afterwards.
        if (options.probes.length > 0) {
            for (const tab of tabs) {
                tab.lastProbe = await tab.page.evaluate(probePage, GRID);
                tab.problems = evaluateProbe(tab, tab.lastProbe);
            }
        }
        cookies = (await context.cookies()).map(c => ({ name: c.name, value: c.value, domain: c.domain, path: c.path }));
        for (const tab of tabs) {
            mkdirSync(dirname(tab.screenshot), { recursive: true });
            await tab.page.screenshot({ path: tab.screenshot });
            tab.screenshotSaved = true;
        }
    } catch (e) {
        error = String(e && e.message ? e.message.split('\n')[0] : e);
    } finally {
        // Screenshots of failing tabs are the most useful ones; take any that are missing.
        for (const tab of tabs) {
            if (!tab.screenshotSaved && tab.page) {
                try {
                    mkdirSync(dirname(tab.screenshot), { recursive: true });
                    await tab.page.screenshot({ path: tab.screenshot, timeout: 3000 });
                    tab.screenshotSaved = true;
                } catch { /* the page may be gone */ }
            }
        }
        if (browser)
            await browser.close().catch(() => {});
    }

    const results = tabs.map(summarise);
    const ok = !error && results.every(r => r.ok);
    finished = true;
    process.stdout.write(JSON.stringify({ ok, error, millis: Date.now() - started, tabs: results, visits, probes, cookies }) + '\n');
    if (!ok) {
        const lines = error ? [`error: ${error}`] : [];
        for (const r of results.filter(x => !x.ok))
            lines.push(`${r.url}: ${r.problems.join('; ')}`
                + (r.httpErrors.length ? `; HTTP: ${r.httpErrors.slice(0, 5).join(', ')}` : ''));
        process.stderr.write(`novnc-check: FAILED after ${Date.now() - started} ms (limit ${options.timeoutMs} ms)\n  ${lines.join('\n  ')}\n`);
        process.exit(1);
    }
}

main().catch(e => {
    process.stderr.write(`novnc-check: ${e && e.stack ? e.stack : e}\n`);
    process.exit(2);
});
