// Preloaded with `node --import ./compat.mjs`: see compat-hooks.mjs.
import { register } from 'node:module';
import * as fs from 'node:fs';

if (typeof fs.globSync !== 'function')
    register('./compat-hooks.mjs', import.meta.url);
