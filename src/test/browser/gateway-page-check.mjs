#!/usr/bin/env node
// Plays, in Debian's headless Chromium, a sandbox page that borrows a page of the gateway's own to
// reach another sandbox: the page of ATTACK_URL (a sandbox's, served in path mode under the
// gateway's origin) runs the attack itself when loaded and leaves its outcome in window.attack
// (a promise); this script only opens the pages and reads the outcomes.
//
//   node gateway-page-check.mjs [--bypass-csp] [--visit URL ...] CONTROL_PAGE CONTROL_WS ATTACK_URL
//
// One browser context, so one cookie jar, as one person: each --visit URL is opened first, in order
// (grant links that leave their cookies); then CONTROL_PAGE (the victim sandbox's own page) opens
// CONTROL_WS, to show the session is good and the socket answers with a frame; then ATTACK_URL is
// opened and its outcome awaited. With --bypass-csp the browser ignores every Content-Security-
// Policy, as if the gateway's pages had none: what is left to stop the attack is the gateway's own
// check of the socket's Origin.
//
// Prints one JSON object: {visits, control, attack}. Exit 0 when it ran (whatever the outcomes:
// the test judges them), 1 when the run itself failed, 2 on bad usage.

import { launchChromium } from './debian-chromium.mjs';

function usage(message) {
    process.stderr.write(`gateway-page-check: ${message}\n`
        + 'usage: node gateway-page-check.mjs [--bypass-csp] [--visit URL ...] CONTROL_PAGE CONTROL_WS ATTACK_URL\n');
    process.exit(2);
}

const visits = [];
const positional = [];
let bypassCSP = false;
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--bypass-csp')
        bypassCSP = true;
    else if (argv[i] === '--visit')
        visits.push(argv[++i] ?? usage('--visit needs URL'));
    else
        positional.push(argv[i]);
}
if (positional.length !== 3)
    usage('expected CONTROL_PAGE CONTROL_WS ATTACK_URL');
const [controlPage, controlWs, attackUrl] = positional;

// Runs in the victim sandbox's own page: its own socket, the first frame it reads.
function openSocket(url) {
    return new Promise(resolve => {
        let socket;
        try {
            socket = new WebSocket(url);
        } catch (e) {
            resolve({ outcome: 'blocked', error: String(e) });
            return;
        }
        const timer = setTimeout(() => { socket.close(); resolve({ outcome: 'no answer' }); }, 5000);
        socket.onmessage = e => { clearTimeout(timer); socket.close(); resolve({ outcome: 'read', frame: String(e.data) }); };
        socket.onclose = e => { clearTimeout(timer); resolve({ outcome: 'refused', code: e.code }); };
    });
}

const browser = await launchChromium();
const result = { bypassCSP, visits: [], control: null, attack: null };
let failed = null;
try {
    const context = await browser.newContext({ bypassCSP });
    for (const url of visits) {
        const page = await context.newPage();
        const response = await page.goto(url, { waitUntil: 'load', timeout: 10000 });
        result.visits.push({ url, status: response ? response.status() : null, finalUrl: page.url() });
        await page.close();
    }
    const control = await context.newPage();
    await control.goto(controlPage, { waitUntil: 'load', timeout: 10000 });
    result.control = await control.evaluate(openSocket, controlWs);
    await control.close();

    const attacker = await context.newPage();
    const popups = [];
    context.on('page', p => popups.push(p));
    await attacker.goto(attackUrl, { waitUntil: 'load', timeout: 10000 });
    result.attack = await attacker.evaluate(() => window.attack);
    result.attack.windows = popups.map(p => p.url());
} catch (e) {
    failed = String(e && e.message ? e.message.split('\n')[0] : e);
} finally {
    await browser.close().catch(() => {});
}
process.stdout.write(JSON.stringify(failed ? { ...result, error: failed } : result) + '\n');
process.exit(failed ? 1 : 0);
