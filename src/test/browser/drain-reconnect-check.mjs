#!/usr/bin/env node
// Watches noVNC tabs in a real headless Chromium (Debian's, through playwright-core) while the test
// drains the gateway replica that carries their WebSockets, and tells how each tab came back.
//
//   node drain-reconnect-check.mjs [--timeout-ms 90000] --tab URL COLOUR SCREENSHOT.png ...
//
// First every tab is opened, in one browser context, and given until the deadline to show its
// desktop: noVNC connected over an open WebSocket, every sampled canvas pixel near COLOUR (hex RGB).
// Then one line goes to stdout: {"event":"connected","at":<epoch ms>}. From then on every tab is
// looked at every 100 ms; each WebSocket the page opens or closes is recorded from inside the page
// (its close code and reason, which Playwright does not report), and each socket that closed gets
// the time of the first look that showed the tab's desktop again over a socket opened after it. Once a line "check" arrives on stdin (the test has drained the replica) and every tab shows
// its desktop, or at the deadline, one JSON object goes to stdout and a screenshot per tab is saved.
// Exit status: 0 every tab shows its desktop at the end, 1 otherwise, 2 bad usage.

import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { createInterface } from 'node:readline';
import { launchChromium } from './debian-chromium.mjs';
import { GRID, TOLERANCE, hex, probePage } from './novnc-canvas.mjs';

const POLL_MS = 100;

function usage(message) {
    process.stderr.write(`drain-reconnect-check: ${message}\n`
        + 'usage: node drain-reconnect-check.mjs [--timeout-ms N] --tab URL COLOUR SCREENSHOT ...\n');
    process.exit(2);
}

function parseArgs(argv) {
    const options = { timeoutMs: 90_000, tabs: [] };
    for (let i = 0; i < argv.length; i++) {
        if (argv[i] === '--timeout-ms') {
            options.timeoutMs = Number(argv[++i]);
            if (!Number.isFinite(options.timeoutMs) || options.timeoutMs <= 0)
                usage(`bad --timeout-ms ${argv[i]}`);
        } else if (argv[i] === '--tab') {
            const [url, colour, screenshot] = argv.slice(i + 1, i + 4);
            i += 3;
            if (screenshot === undefined || !/^[0-9a-fA-F]{6}$/.test(colour))
                usage('--tab needs URL COLOUR (hex RGB such as ff0000) SCREENSHOT');
            options.tabs.push({ url, screenshot, colour: colour.toLowerCase(), rgb: [0, 2, 4].map(k => parseInt(colour.slice(k, k + 2), 16)) });
        } else {
            usage(`unknown argument ${argv[i]}`);
        }
    }
    if (options.tabs.length === 0)
        usage('no --tab given');
    return options;
}

// Runs in every page before its own scripts: each WebSocket the page opens is recorded with how it
// closed. The constructor is wrapped, not changed: noVNC gets the browser's own WebSocket object.
function recordSockets() {
    const Native = window.WebSocket;
    const sockets = [];
    window.sandgateSockets = sockets;
    window.WebSocket = new Proxy(Native, {
        construct(target, args) {
            const socket = new target(...args);
            const record = { url: socket.url, openedAt: Date.now(), closedAt: null, code: null, reason: null };
            sockets.push(record);
            socket.addEventListener('close', e => Object.assign(record, { closedAt: Date.now(), code: e.code, reason: e.reason }));
            return socket;
        },
    });
}

function showsDesktop(tab, probe, sockets) {
    const wrong = probe.samples.filter(s =>
        s.rgba[3] !== 255 || s.rgba.slice(0, 3).some((v, k) => Math.abs(v - tab.rgb[k]) > TOLERANCE));
    return probe.state === 'connected' && probe.canvas !== null && wrong.length === 0 && sockets.some(s => s.closedAt === null);
}

async function look(tab) {
    const probe = await tab.page.evaluate(probePage, GRID);
    const sockets = await tab.page.evaluate(() => window.sandgateSockets || []);
    const now = Date.now();
    tab.probe = probe;
    tab.sockets = sockets;
    tab.ok = showsDesktop(tab, probe, sockets);
    if (!tab.ok)
        return;
    sockets.forEach((closed, i) => {
        if (closed.closedAt !== null && tab.restoredAt[i] === undefined
            && sockets.some(s => s.closedAt === null && s.openedAt >= closed.closedAt))
            tab.restoredAt[i] = now;
    });
}

async function main() {
    const options = parseArgs(process.argv.slice(2));
    const started = Date.now();
    const deadline = started + options.timeoutMs;
    let finished = false;
    const watchdog = setTimeout(() => {
        if (!finished) {
            process.stdout.write(JSON.stringify({ ok: false, error: 'hard deadline exceeded' }) + '\n');
            process.exit(1);
        }
    }, options.timeoutMs + 5000);
    watchdog.unref();
    let checkAsked = false;
    createInterface({ input: process.stdin }).on('line', line => { if (line.trim() === 'check') checkAsked = true; });

    const tabs = options.tabs.map(t => ({ ...t, ok: false, probe: null, sockets: [], restoredAt: {}, connectedAt: null }));
    let browser;
    let error = null;
    try {
        browser = await launchChromium();
        const context = await browser.newContext({ viewport: { width: 800, height: 600 } });
        await context.addInitScript(recordSockets);
        for (const tab of tabs)
            tab.page = await context.newPage();
        await Promise.all(tabs.map(tab => tab.page.goto(tab.url, { waitUntil: 'load', timeout: Math.max(1000, deadline - Date.now()) })));
        while (Date.now() < deadline) {
            for (const tab of tabs) {
                await look(tab);
                tab.connectedAt ??= tab.ok ? Date.now() : null;
            }
            if (tabs.every(tab => tab.connectedAt !== null))
                break;
            await new Promise(r => setTimeout(r, POLL_MS));
        }
        if (tabs.every(tab => tab.connectedAt !== null)) {
            process.stdout.write(JSON.stringify({ event: 'connected', at: Date.now() }) + '\n');
            while (Date.now() < deadline) {
                for (const tab of tabs)
                    await look(tab);
                if (checkAsked && tabs.every(tab => tab.ok))
                    break;
                await new Promise(r => setTimeout(r, POLL_MS));
            }
        }
    } catch (e) {
        error = String(e && e.message ? e.message.split('\n')[0] : e);
    } finally {
        for (const tab of tabs) {
            if (tab.page) {
                try {
                    mkdirSync(dirname(tab.screenshot), { recursive: true });
                    await tab.page.screenshot({ path: tab.screenshot, timeout: 3000 });
                } catch { /* the page may be gone */ }
            }
        }
        if (browser)
            await browser.close().catch(() => {});
    }
    const results = tabs.map(tab => ({
        url: tab.url,
        ok: tab.ok,
        state: tab.probe ? tab.probe.state : 'not loaded',
        status: tab.probe ? tab.probe.status : '',
        sampledColours: tab.probe ? Object.fromEntries(tab.probe.samples.map(s => hex(s.rgba)).map(c => [c, true])) : {},
        connectedAt: tab.connectedAt,
        sockets: tab.sockets.map((socket, i) => ({ ...socket, restoredAt: tab.restoredAt[i] ?? null })),
    }));
    const ok = !error && checkAsked && results.every(r => r.ok);
    finished = true;
    process.stdout.write(JSON.stringify({ ok, error, checkAsked, millis: Date.now() - started, tabs: results }) + '\n');
    process.exit(ok ? 0 : 1);
}

main().catch(e => {
    process.stderr.write(`drain-reconnect-check: ${e && e.stack ? e.stack : e}\n`);
    process.exit(2);
});
