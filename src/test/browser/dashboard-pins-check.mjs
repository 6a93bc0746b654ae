#!/usr/bin/env node
// Drives the dashboard's pending MCP tool changes in Debian's headless Chromium: signs in, waits for
// the row of TOOL showing OLD_DESCRIPTION and NEW_DESCRIPTION as text (no element of the server's
// text is made: a description holding markup stays text), approves it, confirming, and waits for
// the row to go. Saves a screenshot. Exit 0 when all of it happens, 1 otherwise; the test that
// runs it checks the approval on the gateway's side.
//
//   node dashboard-pins-check.mjs URL TOKEN TOOL OLD_DESCRIPTION NEW_DESCRIPTION SCREENSHOT.png

import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { launchChromium } from './debian-chromium.mjs';

const [url, token, tool, before, after, screenshot] = process.argv.slice(2);
if (!screenshot) {
    process.stderr.write('usage: node dashboard-pins-check.mjs URL TOKEN TOOL OLD_DESCRIPTION NEW_DESCRIPTION SCREENSHOT.png\n');
    process.exit(2);
}
const browser = await launchChromium();
let ok = false;
try {
    const page = await browser.newPage();
    const asked = [];
    page.on('dialog', async dialog => { asked.push(dialog.message()); await dialog.accept(); });
    await page.goto(url);
    await page.fill('#token', token);
    await page.click('button[type=submit]');

    const row = page.locator('#pins tbody tr', { hasText: tool });
    await row.waitFor({ timeout: 15000 });
    const text = await row.textContent();
    if (!text.includes(before + ' → ' + after))
        throw new Error('the row shows the descriptions before and after: ' + text);
    if (!text.includes('whole definitions') || !text.includes('"description": ' + JSON.stringify(after)))
        throw new Error('the row holds the whole definition that an approval approves: ' + text);
    if (await page.locator('#pins img').count() !== 0)
        throw new Error('markup in a description must stay text');
    mkdirSync(dirname(screenshot), { recursive: true });
    await page.screenshot({ path: screenshot, fullPage: true });

    await row.getByRole('button', { name: 'Approve' }).click();
    await page.waitForFunction(() => document.querySelector('#notice').textContent.startsWith('Done: Approve'), null, { timeout: 10000 });
    await page.waitForFunction(name => ![...document.querySelectorAll('#pins tbody tr')].some(r => r.textContent.includes(name)), tool, { timeout: 10000 });
    if (asked.length !== 1)
        throw new Error('one confirmation expected: ' + JSON.stringify(asked));
    ok = true;
    console.log(JSON.stringify({ ok, asked }));
} catch (e) {
    process.stderr.write('dashboard-pins-check: ' + e.message + '\n');
} finally {
    await browser.close();
}
process.exit(ok ? 0 : 1);
