// Reads the pixels of a PNG as Chromium's screenshots write them (8 bits per channel, RGB or RGBA,
// not interlaced), so that a check can look at colours on the screen rather than at the DOM that
// should have put them there. Nothing more of PNG than that.
import { inflateSync } from 'node:zlib';

export function decodePng(png) {
    if (png.readUInt32BE(0) !== 0x89504e47)
        throw new Error('not a PNG');
    let offset = 8, width = 0, height = 0, channels = 0;
    const data = [];
    while (offset < png.length) {
        const length = png.readUInt32BE(offset);
        const type = png.toString('ascii', offset + 4, offset + 8);
        const body = png.subarray(offset + 8, offset + 8 + length);
        if (type === 'IHDR') {
            width = body.readUInt32BE(0);
            height = body.readUInt32BE(4);
            const depth = body[8], colour = body[9], interlace = body[12];
            channels = { 2: 3, 6: 4 }[colour];
            if (depth !== 8 || !channels || interlace !== 0)
                throw new Error('PNG not as Chromium writes screenshots: depth ' + depth + ', colour type ' + colour + ', interlace ' + interlace);
        } else if (type === 'IDAT') {
            data.push(body);
        }
        offset += 12 + length;
    }
    const raw = inflateSync(Buffer.concat(data));
    const stride = width * channels;
    const pixels = Buffer.alloc(height * stride);
    // Undo each row's filter (PNG spec, section 9): none, sub, up, average, Paeth.
    for (let y = 0; y < height; y++) {
        const filter = raw[y * (stride + 1)];
        for (let i = 0; i < stride; i++) {
            const x = raw[y * (stride + 1) + 1 + i];
            const a = i >= channels ? pixels[y * stride + i - channels] : 0;
            const b = y > 0 ? pixels[(y - 1) * stride + i] : 0;
            const c = i >= channels && y > 0 ? pixels[(y - 1) * stride + i - channels] : 0;
            let predicted = 0;
            if (filter === 1) predicted = a;
            else if (filter === 2) predicted = b;
            else if (filter === 3) predicted = (a + b) >> 1;
            else if (filter === 4) {
                const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
                predicted = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
            }
            pixels[y * stride + i] = (x + predicted) & 0xff;
        }
    }
    return {
        width, height,
        rgb(x, y) {
            const at = y * stride + x * channels;
            return [pixels[at], pixels[at + 1], pixels[at + 2]];
        },
    };
}

// The pixels within `tolerance` of a colour, in each channel, as [x, y] pairs.
export function pixelsNear(image, [r, g, b], tolerance) {
    const found = [];
    for (let y = 0; y < image.height; y++) {
        for (let x = 0; x < image.width; x++) {
            const [pr, pg, pb] = image.rgb(x, y);
            if (Math.abs(pr - r) <= tolerance && Math.abs(pg - g) <= tolerance && Math.abs(pb - b) <= tolerance)
                found.push([x, y]);
        }
    }
    return found;
}
