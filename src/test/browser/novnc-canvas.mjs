// What a noVNC tab shows, read from inside the page: shared by the browser checks that drive noVNC
// (novnc-check.mjs, drain-reconnect-check.mjs).

export const TOLERANCE = 24;   // per channel; solid fills arrive exactly, JPEG may shift a little
export const GRID = 5;         // GRID x GRID pixels sampled across the canvas

// Runs in the page: what the noVNC canvas shows now, and what noVNC says about its connection.
export function probePage(grid) {
    const root = document.documentElement;
    let state = root.dataset.rfbState                                    // our 1.6-style viewer
        || (root.classList.contains('noVNC_connected') ? 'connected'       // noVNC's own app
            : root.classList.contains('noVNC_connecting') ? 'connecting'
                : root.classList.contains('noVNC_disconnecting') ? 'disconnecting'
                    : 'unknown');
    const statusElement = document.getElementById('noVNC_status') || document.getElementById('status');
    const status = statusElement ? statusElement.textContent.trim() : '';
    const canvases = [...document.querySelectorAll('canvas')].filter(c => c.width > 0 && c.height > 0);
    if (canvases.length === 0)
        return { state, status, canvas: null, samples: [] };
    const canvas = canvases.reduce((a, b) => (b.width * b.height > a.width * a.height ? b : a));
    // Copy noVNC's canvas into a private one rather than reading through noVNC's own context.
    const copy = document.createElement('canvas');
    copy.width = canvas.width;
    copy.height = canvas.height;
    const ctx = copy.getContext('2d', { willReadFrequently: true });
    ctx.drawImage(canvas, 0, 0);
    const samples = [];
    for (let gy = 0; gy < grid; gy++) {
        for (let gx = 0; gx < grid; gx++) {
            const x = Math.floor((gx + 0.5) * canvas.width / grid);
            const y = Math.floor((gy + 0.5) * canvas.height / grid);
            const [r, g, b, a] = ctx.getImageData(x, y, 1, 1).data;
            samples.push({ x, y, rgba: [r, g, b, a] });
        }
    }
    return { state, status, canvas: { width: canvas.width, height: canvas.height }, samples };
}

export function hex(rgba) {
    return rgba.slice(0, 3).map(v => v.toString(16).padStart(2, '0')).join('');
}
