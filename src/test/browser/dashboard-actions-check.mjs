#!/usr/bin/env node
// Drives the admin dashboard's actions in Debian's headless Chromium, as an operator would: signs in,
// types a sandbox id prefix and waits for exactly the routes EXPECTED (comma-separated) to be listed;
// clicks "Delete route" on DELETE_ID and dismisses the confirmation (the route must stay); then,
// confirming each, revokes REVOKE_ID's access, deletes DELETE_ID's route, ends the MCP session
// SESSION_ID and reloads egress, waiting each time for the page to show the effect. Saves a
// screenshot. Prints the confirmations asked; exit 0 when all of it happens, 1 otherwise. The test
// that runs it checks the effects and the audit lines on the gateway's side.
//
//   node dashboard-actions-check.mjs URL TOKEN PREFIX EXPECTED REVOKE_ID DELETE_ID SESSION_ID SCREENSHOT.png

import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { launchChromium } from './debian-chromium.mjs';

const [url, token, prefix, expectedList, revokeId, deleteId, sessionId, screenshot] = process.argv.slice(2);
if (!screenshot) {
    process.stderr.write('usage: node dashboard-actions-check.mjs URL TOKEN PREFIX EXPECTED REVOKE_ID DELETE_ID SESSION_ID SCREENSHOT.png\n');
    process.exit(2);
}
const expected = expectedList.split(',');
const browser = await launchChromium();
let ok = false;
try {
    const page = await browser.newPage();
    const asked = [];
    let answer = 'accept';
    page.on('dialog', async dialog => {
        asked.push(answer + ': ' + dialog.message());
        await (answer === 'accept' ? dialog.accept() : dialog.dismiss());
    });
    const route = id => page.locator('#routes tbody tr[data-sandbox="' + id + '"]');
    await page.goto(url);
    await page.fill('#token', token);
    await page.click('button[type=submit]');

    await page.fill('#route-search', prefix);
    await page.waitForFunction(ids => {
        const rows = [...document.querySelectorAll('#routes tbody tr')].map(r => r.dataset.sandbox);
        return rows.length === ids.length && ids.every(id => rows.includes(id));
    }, expected, { timeout: 15000 });

    // Dismissed: nothing is sent, the route stays through the next refreshes.
    answer = 'dismiss';
    await route(deleteId).getByRole('button', { name: 'Delete route' }).click();
    await page.waitForTimeout(2500);
    if (await route(deleteId).count() !== 1)
        throw new Error('a dismissed confirmation must change nothing');
    answer = 'accept';

    await route(revokeId).getByRole('button', { name: 'Revoke access' }).click();
    await page.waitForFunction(id => {
        const row = document.querySelector('#routes tbody tr[data-sandbox="' + id + '"]');
        return row && row.textContent.includes('access revoked');
    }, revokeId, { timeout: 10000 });

    await route(deleteId).getByRole('button', { name: 'Delete route' }).click();
    await page.waitForFunction(id => !document.querySelector('#routes tbody tr[data-sandbox="' + id + '"]')
        && document.querySelectorAll('#routes tbody tr').length > 0, deleteId, { timeout: 10000 });

    const session = page.locator('#mcp tbody tr[data-session="' + sessionId + '"]');
    await session.waitFor({ timeout: 10000 });
    await session.getByRole('button', { name: 'End session' }).click();
    await page.waitForFunction(id => !document.querySelector('#mcp tbody tr[data-session="' + id + '"]'), sessionId, { timeout: 10000 });

    await page.click('#egress-reload');
    await page.waitForFunction(() => document.querySelector('#notice').textContent.startsWith('Done: Reload egress'), null, { timeout: 10000 });

    if (asked.length !== 5)
        throw new Error('one confirmation per click expected: ' + JSON.stringify(asked));
    mkdirSync(dirname(screenshot), { recursive: true });
    await page.screenshot({ path: screenshot, fullPage: true });
    ok = true;
    console.log(JSON.stringify({ ok, asked }));
} catch (e) {
    process.stderr.write('dashboard-actions-check: ' + e.message + '\n');
} finally {
    await browser.close();
}
process.exit(ok ? 0 : 1);
