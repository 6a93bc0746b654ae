// Node's fetch through a forward proxy with undici's ProxyAgent, as an agent's SDK would run it in a
// sandbox: the CAs it trusts beyond Node's own come from NODE_EXTRA_CA_CERTS only.
// Usage: node proxy-fetch.mjs <proxy url> <target url> <headers as JSON> [body]
// Prints the status on the first line, then the body.
import { ProxyAgent, fetch } from 'undici';

const [, , proxy, url, headers, body] = process.argv;
const dispatcher = new ProxyAgent(proxy);
try {
  const response = await fetch(url, { dispatcher, method: body === undefined ? 'GET' : 'POST', headers: JSON.parse(headers), body });
  process.stdout.write(response.status + '\n' + await response.text());
} catch (failure) {
  process.stdout.write('0\n' + (failure.cause?.code ?? failure.cause?.message ?? failure.message));
} finally {
  await dispatcher.close();
}
