// The OpenID provider PawFlow's sign-in tests run on loopback: the certified oidc-provider
// with its own sign-in page (devInteractions: any password), a few people with a groups
// claim, and signing keys that rotate on request. Started by tests/oidc/conftest.py as
//   node provider.js PORT
// It prints "listening ISSUER" once it serves. Besides the provider's own routes it answers,
// for the tests only, on loopback:
//   POST /__test/accounts  {"sub": {"email": …, "name": …, "groups": […]}, …}  who exists
//   POST /__test/rotate                                          a new signing key, used first
//   POST /__test/tamper    {"claims": {…}} | {"forge": true}     the next ID token is altered
//   POST /__test/down      {"down": true}                        every provider route is a 503
import http from 'node:http';
import crypto from 'node:crypto';
import * as jose from 'jose';
import Provider from 'oidc-provider';

const port = Number(process.argv[2] || 0);
const host = '127.0.0.1';
const CLIENT_ID = 'pawflow';
const CLIENT_SECRET = 'pawflow-test-secret';
const SCOPES = ['openid', 'email', 'profile', 'groups'];

let accounts = {
  ann: { email: 'ann@example.org', name: 'Ann Example', groups: ['pawflow-admins', 'approvers'] },
  bob: { email: 'bob@example.org', name: 'Bob Example', groups: ['finance'] },
};
let keys = [];
let provider;
let tamper = null;
let down = false;

async function newKey() {
  // P-256 keys: as good a test of the signature checks as RSA, and made in no time.
  const { privateKey } = await jose.generateKeyPair('ES256', { extractable: true });
  const jwk = await jose.exportJWK(privateKey);
  return { ...jwk, kid: crypto.randomUUID(), alg: 'ES256', use: 'sig' };
}

// Any loopback (or the in-process test client's) address may be redirected to.
function loopback(value) {
  try {
    const url = new URL(value);
    return ['127.0.0.1', 'localhost', 'testserver', '[::1]'].includes(url.hostname);
  } catch {
    return false;
  }
}

function build(issuer) {
  const made = new Provider(issuer, {
    clients: [{
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      redirect_uris: ['http://127.0.0.1/signin/oidc/callback'],
      post_logout_redirect_uris: ['http://127.0.0.1/signin'],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      id_token_signed_response_alg: 'ES256',
    }],
    jwks: { keys },
    cookies: { keys: ['pawflow-test-cookie-key'] },
    scopes: SCOPES,
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name', 'preferred_username'],
      groups: ['groups'],
    },
    conformIdTokenClaims: false, // the ID token carries the scopes' claims (groups, email)
    features: {
      devInteractions: { enabled: true },
      rpInitiatedLogout: { enabled: true },
    },
    pkce: { required: () => true },
    ttl: { IdToken: 300, AccessToken: 300, AuthorizationCode: 60, Session: 3600, Interaction: 600, Grant: 3600 },
    async findAccount(ctx, sub) {
      const person = accounts[sub];
      if (!person) return undefined;
      return {
        accountId: sub,
        async claims() {
          return {
            sub,
            email: person.email,
            email_verified: true,
            name: person.name,
            preferred_username: sub,
            groups: person.groups,
          };
        },
      };
    },
    // No consent screen: the test client is granted what it asks.
    async loadExistingGrant(ctx) {
      const grantId = ctx.oidc.result?.consent?.grantId
        || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
      if (grantId) return ctx.oidc.provider.Grant.find(grantId);
      const grant = new ctx.oidc.provider.Grant({
        clientId: ctx.oidc.client.clientId,
        accountId: ctx.oidc.session.accountId,
      });
      grant.addOIDCScope(SCOPES.join(' '));
      grant.addOIDCClaims(['email', 'email_verified', 'name', 'preferred_username', 'groups']);
      await grant.save();
      return grant;
    },
  });
  made.Client.prototype.redirectUriAllowed = loopback;
  made.Client.prototype.postLogoutRedirectUriAllowed = loopback;
  return made;
}

async function tampered(idToken) {
  const claims = jose.decodeJwt(idToken);
  const header = jose.decodeProtectedHeader(idToken);
  let key = keys[0];
  if (tamper.forge) key = { ...(await newKey()), kid: header.kid }; // same kid, unknown key
  const signing = await jose.importJWK(key, 'ES256');
  return new jose.SignJWT({ ...claims, ...(tamper.claims || {}) })
    .setProtectedHeader({ alg: 'ES256', kid: key.kid, typ: header.typ })
    .sign(signing);
}

// The next token response's id_token, altered as asked.
function alterTokenResponse(res) {
  const chunks = [];
  const write = res.write.bind(res);
  const end = res.end.bind(res);
  res.write = (chunk) => { chunks.push(Buffer.from(chunk)); return true; };
  res.end = (chunk, ...rest) => {
    if (chunk && typeof chunk !== 'function') chunks.push(Buffer.from(chunk));
    const body = Buffer.concat(chunks).toString('utf8');
    let parsed;
    try { parsed = JSON.parse(body); } catch { parsed = null; }
    if (!parsed || !parsed.id_token || !tamper) {
      write(body);
      return end();
    }
    tampered(parsed.id_token).then((token) => {
      tamper = null;
      const out = JSON.stringify({ ...parsed, id_token: token });
      if (!res.headersSent) res.setHeader('content-length', Buffer.byteLength(out));
      write(out);
      end();
    });
    return res;
  };
}

async function readJson(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : {};
}

function reply(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function control(req, res, path) {
  const body = await readJson(req);
  if (path === '/__test/accounts') {
    accounts = body;
  } else if (path === '/__test/rotate') {
    keys = [await newKey(), ...keys].slice(0, 2);
    provider = build(provider.issuer);
  } else if (path === '/__test/tamper') {
    tamper = body;
  } else if (path === '/__test/down') {
    down = Boolean(body.down);
  } else {
    return reply(res, 404, { error: 'unknown' });
  }
  return reply(res, 200, { ok: true, kids: keys.map((k) => k.kid) });
}

keys = [await newKey()];
const server = http.createServer((req, res) => {
  const path = new URL(req.url, 'http://x').pathname;
  if (path.startsWith('/__test/') && req.method === 'POST') {
    control(req, res, path).catch((error) => reply(res, 500, { error: String(error) }));
    return;
  }
  if (down) {
    reply(res, 503, { error: 'temporarily_unavailable' });
    return;
  }
  if (path === '/token' && tamper) alterTokenResponse(res);
  provider.callback()(req, res);
});
server.listen(port, host, () => {
  const issuer = `http://${host}:${server.address().port}`;
  provider = build(issuer);
  process.stdout.write(`listening ${issuer}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
