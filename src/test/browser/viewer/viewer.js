// Connects like noVNC 1.6's app with its default settings: no host or port given, so the
// WebSocket URL is the path setting ('websockify') resolved against the page's own URL. Opened at
// /vnc/<id>/ the socket therefore goes to /vnc/<id>/websockify, carrying the id in its path.
// The test's web root puts the unmodified @novnc/novnc package (core/ and vendor/) under novnc/.
// With ?reconnect=true it follows the reconnect rule of noVNC's app (settings reconnect and
// reconnect_delay, 5000 ms unless given): after a clean disconnect, which is how noVNC reports a
// server closing the connection, a new RFB to the same URL once the delay has passed.
import RFB from './novnc/core/rfb.js';

const root = document.documentElement;
const status = document.getElementById('status');
const params = new URLSearchParams(window.location.search);
const reconnect = params.get('reconnect') === 'true';
const reconnectDelay = parseInt(params.get('reconnect_delay') || '5000', 10);

function setState(state, detail) {
    root.dataset.rfbState = state;
    status.textContent = detail ? state + ': ' + detail : state;
}

const path = params.get('path') || 'websockify';
const url = new URL(path, window.location.href);
url.protocol = window.location.protocol === 'https:' ? 'wss:' : 'ws:';
root.dataset.wsUrl = url.href;

function connect() {
    setState('connecting', url.href);
    const rfb = new RFB(document.getElementById('screen'), url.href, { shared: true });
    rfb.viewOnly = true;
    rfb.addEventListener('connect', () => setState('connected', url.href));
    rfb.addEventListener('disconnect', (e) => {
        if (e.detail.clean && reconnect) {
            setState('reconnecting', 'in ' + reconnectDelay + ' ms');
            setTimeout(connect, reconnectDelay);
        } else {
            setState('disconnected', e.detail.clean ? 'clean' : 'unclean');
        }
    });
    rfb.addEventListener('securityfailure', (e) => setState('securityfailure', e.detail.reason || String(e.detail.status)));
    rfb.addEventListener('credentialsrequired', () => setState('credentialsrequired'));
    window.sandgateRfb = rfb;
}

try {
    connect();
} catch (e) {
    setState('error', String(e));
}
