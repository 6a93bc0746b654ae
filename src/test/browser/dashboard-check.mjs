#!/usr/bin/env node
// Opens Sandgate's admin dashboard in Debian's headless Chromium, signs in with the token, and
// waits until the page shows the expected sandbox route (with its "Open desktop" link) and egress
// node as healthy; prints READY; then waits, without reloading, for the route NEW_ID to appear and
// the node to show as ejected (the test adds the one and breaks the other after READY). Saves a
// screenshot. Exit 0 when all of it happens, 1 when something does not within the deadline.
//
//   node dashboard-check.mjs URL TOKEN SANDBOX_ID NODE_ID NEW_ID SCREENSHOT.png

import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { chromium } from 'playwright-core';

const [url, token, sandbox, node, added, screenshot] = process.argv.slice(2);
if (!screenshot) {
    process.stderr.write('usage: node dashboard-check.mjs URL TOKEN SANDBOX_ID NODE_ID NEW_ID SCREENSHOT.png\n');
    process.exit(2);
}
const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
        '--disable-component-update', '--no-first-run', '--disable-sync', '--disable-quic'],
});
let ok = false;
try {
    const page = await browser.newPage();
    await page.goto(url);
    await page.fill('#token', token);
    await page.click('button[type=submit]');
    await page.waitForFunction(([id, nodeId]) => {
        const rows = [...document.querySelectorAll('#routes tbody tr')];
        const route = rows.find(r => r.cells[0].textContent === id);
        const link = route && route.querySelector('a');
        const pool = document.querySelector('#pools');
        return link && link.textContent === 'Open desktop' && link.href.includes('/vnc/' + id + '/')
            && pool.textContent.includes(nodeId) && pool.textContent.includes('healthy');
    }, [sandbox, node], { timeout: 15000 });
    console.log('READY');
    await page.waitForFunction(([id]) => {
        const rows = [...document.querySelectorAll('#routes tbody tr')];
        return rows.some(r => r.cells[0].textContent === id)
            && document.querySelector('#pools').textContent.includes('ejected');
    }, [added], { timeout: 20000 });
    const stored = await page.evaluate(() => [sessionStorage.getItem('sandgate.admin.token'), localStorage.length]);
    if (stored[0] !== token || stored[1] !== 0)
        throw new Error('token must live in sessionStorage only: ' + JSON.stringify(stored));
    mkdirSync(dirname(screenshot), { recursive: true });
    await page.screenshot({ path: screenshot, fullPage: true });
    ok = true;
    console.log(JSON.stringify({ ok, url }));
} catch (e) {
    process.stderr.write('dashboard-check: ' + e.message + '\n');
} finally {
    await browser.close();
}
process.exit(ok ? 0 : 1);
