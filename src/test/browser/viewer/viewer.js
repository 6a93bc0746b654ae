// Connects like noVNC 1.6's app with its default settings: no host or port given, so the
// WebSocket URL is the path setting ('websockify') resolved against the page's own URL. Opened at
// /vnc/<id>/ the socket therefore goes to /vnc/<id>/websockify, carrying the id in its path.
// The test's web root puts the unmodified @novnc/novnc package (core/ and vendor/) under novnc/.
import RFB from './novnc/core/rfb.js';

const root = document.documentElement;
const status = document.getElementById('status');

function setState(state, detail) {
    root.dataset.rfbState = state;
    status.textContent = detail ? state + ': ' + detail : state;
}

const path = new URLSearchParams(window.location.search).get('path') || 'websockify';
const url = new URL(path, window.location.href);
url.protocol = window.location.protocol === 'https:' ? 'wss:' : 'ws:';
root.dataset.wsUrl = url.href;

setState('connecting', url.href);
try {
    const rfb = new RFB(document.getElementById('screen'), url.href, { shared: true });
    rfb.viewOnly = true;
    rfb.addEventListener('connect', () => setState('connected', url.href));
    rfb.addEventListener('disconnect', (e) => setState('disconnected', e.detail.clean ? 'clean' : 'unclean'));
    rfb.addEventListener('securityfailure', (e) => setState('securityfailure', e.detail.reason || String(e.detail.status)));
    rfb.addEventListener('credentialsrequired', () => setState('credentialsrequired'));
    window.sandgateRfb = rfb;
} catch (e) {
    setState('error', String(e));
}
