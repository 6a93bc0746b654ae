// Debian's Chromium, headless, as the dashboard checks drive it: never a browser Playwright would
// download, and nothing in the background (updates, sync, QUIC) to make a run differ from another.
import { chromium } from 'playwright-core';

export function launchChromium() {
    return chromium.launch({
        executablePath: '/usr/bin/chromium',
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
            '--disable-component-update', '--no-first-run', '--disable-sync', '--disable-quic'],
    });
}
