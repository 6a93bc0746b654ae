#!/usr/bin/env node
// Opens Sandgate's admin dashboard in Debian's headless Chromium, signs in with the token, and
// waits until the page shows the expected sandbox route (with its "Open desktop" link) and egress
// node as healthy, in the table and in the weight chart; prints READY; then waits, without
// reloading, for the route NEW_ID to appear, paused, and the node to show as ejected: in the table, and in
// the chart as a line that came down to the zero line, with red marks on the ejected samples (the
// test adds the one and breaks the other after READY): in the SVG, and in the pixels of screenshots
// of the chart (no red before, red along the zero line after). Saves a screenshot of the page, and
// one of the chart beside it. Exit 0 when all of it happens, 1 when something does not within the deadline.
//
//   node dashboard-check.mjs URL TOKEN SANDBOX_ID NODE_ID NEW_ID SCREENSHOT.png

import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { launchChromium } from './debian-chromium.mjs';
import { decodePng, pixelsNear } from './png-pixels.mjs';

const [url, token, sandbox, node, added, screenshot] = process.argv.slice(2);
// The dashboard's mark of an ejected sample (app.js's EJECTED, #b3261e).
const EJECTED_RED = [179, 38, 30];
if (!screenshot) {
    process.stderr.write('usage: node dashboard-check.mjs URL TOKEN SANDBOX_ID NODE_ID NEW_ID SCREENSHOT.png\n');
    process.exit(2);
}
// The dashboard draws its charts anew on every refresh, replacing each SVG: a screenshot that
// meets a replaced one is taken again of the new one.
async function chartScreenshot(page, options = {}) {
    for (let attempt = 1; ; attempt++) {
        try {
            return await page.locator('#chart-egress').screenshot(options);
        } catch (e) {
            if (attempt === 5 || !/not attached|detached/i.test(e.message))
                throw e;
        }
    }
}

const browser = await launchChromium();
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
            && route.cells[1].textContent === 'running'
            && pool.textContent.includes(nodeId) && pool.textContent.includes('healthy');
    }, [sandbox, node], { timeout: 15000 });
    await page.waitForFunction(([nodeId]) => {
        const line = [...document.querySelectorAll('#chart-egress path.series')].find(p => p.dataset.series.endsWith('/' + nodeId));
        const values = line ? JSON.parse(line.dataset.values).filter(v => v !== null) : [];
        return values.length > 0 && values[values.length - 1] > 0;
    }, [node], { timeout: 15000 });
    // On the screen, not only in the DOM: no red in the weight chart while the node is healthy.
    const healthyRed = pixelsNear(decodePng(await chartScreenshot(page)), EJECTED_RED, 40);
    if (healthyRed.length !== 0)
        throw new Error('red in the chart of a healthy node, at ' + JSON.stringify(healthyRed.slice(0, 5)));
    console.log('READY');
    await page.waitForFunction(([id]) => {
        const rows = [...document.querySelectorAll('#routes tbody tr')];
        return rows.some(r => r.cells[0].textContent === id && r.cells[1].textContent === 'paused')
            && document.querySelector('#pools').textContent.includes('ejected');
    }, [added], { timeout: 20000 });
    // The chart shows the ejection: the node's line drawn at a weight above zero, then down on the
    // zero line (its last point's y is the axis's), and red marks where the samples say ejected.
    const drawn = await page.waitForFunction(([nodeId]) => {
        const svg = document.querySelector('#chart-egress');
        const line = svg && [...svg.querySelectorAll('path.series')].find(p => p.dataset.series.endsWith('/' + nodeId));
        if (!line) return false;
        const ys = line.getAttribute('d').split(/[ML]/).map(t => t.trim()).filter(t => t).map(t => parseFloat(t.split(' ')[1]));
        const baseline = parseFloat(svg.dataset.baseline);
        const marks = svg.querySelectorAll('circle.ejected[data-series="' + line.dataset.series + '"]');
        const ok = ys.length > 1 && Math.abs(ys[ys.length - 1] - baseline) < 0.5 && ys.some(y => y < baseline - 10) && marks.length > 0;
        return ok && { points: ys.length, marks: marks.length, fill: getComputedStyle(marks[0]).fill };
    }, [node], { timeout: 20000 });
    const chart = await drawn.jsonValue();
    if (chart.fill !== 'rgb(' + EJECTED_RED.join(', ') + ')')
        throw new Error('ejected samples must be marked red: ' + JSON.stringify(chart));
    const stored = await page.evaluate(() => [sessionStorage.getItem('sandgate.admin.token'), localStorage.length]);
    if (stored[0] !== token || stored[1] !== 0)
        throw new Error('token must live in sessionStorage only: ' + JSON.stringify(stored));
    mkdirSync(dirname(screenshot), { recursive: true });
    await page.screenshot({ path: screenshot, fullPage: true });
    // And on the screen: red, along the zero line.
    const chartShot = await chartScreenshot(page, { path: screenshot.replace(/\.png$/, '-egress-chart.png') });
    const image = decodePng(chartShot);
    const red = pixelsNear(image, EJECTED_RED, 40);
    const baseline = await page.locator('#chart-egress').evaluate(svg => parseFloat(svg.dataset.baseline));
    const meanY = red.reduce((sum, [, y]) => sum + y, 0) / Math.max(1, red.length);
    if (red.length < 10 || Math.abs(meanY - baseline) > 4)
        throw new Error('the screenshot does not show the ejection: ' + JSON.stringify({ red: red.length, meanY, baseline, width: image.width }));
    chart.redPixels = red.length;
    ok = true;
    console.log(JSON.stringify({ ok, url, chart }));
} catch (e) {
    process.stderr.write('dashboard-check: ' + e.message + '\n');
} finally {
    await browser.close();
}
process.exit(ok ? 0 : 1);
