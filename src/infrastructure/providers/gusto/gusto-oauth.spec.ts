import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { OpenApiContract } from '../../../../test/utils/openapi-contract';
import { ManualClock } from '../../../domain/shared/clock';
import { GustoApiError, GustoHttp, GustoUnauthorized } from './gusto-http';
import { authorizeUrl, GustoOAuth, refreshDueAt } from './gusto-oauth';

const API_VERSION = '2026-02-01';
const COMPANY = '7b1d0df1-6403-4a06-8768-c1dd7d24d27a';
const NOW = '2026-03-02T09:00:00.000Z';

interface Received {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: unknown;
}

describe('Gusto OAuth', () => {
  const contract = OpenApiContract.fromFile('test/fixtures/gusto-openapi.yaml');
  const received: Received[] = [];
  let answer: (res: ServerResponse) => void = () => undefined;
  let server: Server;
  let baseUrl: string;

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        received.push({ method: req.method ?? '', path: new URL(req.url ?? '/', 'http://x').pathname, headers: req.headers, body: text ? JSON.parse(text) : undefined });
        answer(res);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  beforeEach(() => (received.length = 0));

  const respond = (status: number, body: unknown) => {
    answer = (res) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };

  const oauth = (clock = new ManualClock(NOW)) =>
    new GustoOAuth({
      http: new GustoHttp({ baseUrl, apiVersion: API_VERSION, timeoutMs: 2_000, backoffBaseMs: 1 }),
      clientId: 'client-1',
      clientSecret: 'secret-1',
      redirectUri: 'https://app.example.com/gusto/callback',
      clock,
    });

  /** The document's Authentication-Object example. */
  const tokenAnswer = {
    access_token: '737HdeXfIqgx-NfaUFRuhV7JDe6ns6ptanJSMuQzjlc',
    token_type: 'bearer',
    expires_in: 7200,
    refresh_token: 'iEjL96L9Pndwmi-xVX3Q-xbrvvhnjHYGX87sopgGJ8E',
    scope: 'ach_transactions:read benefits:read companies:read',
    created_at: 1732033824,
  };

  const asContractRequest = (sent: Received) => ({
    method: sent.method,
    path: sent.path,
    headers: sent.headers,
    body: sent.body,
    contentType: sent.headers['content-type'],
  });

  it('builds the authorize URL with client_id, redirect_uri, response_type=code and state', () => {
    const url = new URL(authorizeUrl({ baseUrl: 'https://api.gusto-demo.com', clientId: 'client-1', redirectUri: 'https://app.example.com/cb?x=1', state: 's 1' }));
    expect(url.origin + url.pathname).toBe('https://api.gusto-demo.com/oauth/authorize');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      client_id: 'client-1',
      redirect_uri: 'https://app.example.com/cb?x=1',
      response_type: 'code',
      state: 's 1',
    });
  });

  it('refreshes ahead of expiry: 5 minutes before by default', () => {
    expect(refreshDueAt(new Date('2026-03-02T11:00:00Z')).toISOString()).toBe('2026-03-02T10:55:00.000Z');
    expect(refreshDueAt(new Date('2026-03-02T11:00:00Z'), 60_000).toISOString()).toBe('2026-03-02T10:59:00.000Z');
  });

  describe('refresh', () => {
    it('posts the body the document specifies and returns the new pair, expiring expires_in after the request', async () => {
      respond(200, tokenAnswer);
      const tokens = await oauth().refresh('old-refresh');

      expect(tokens).toEqual({
        accessToken: tokenAnswer.access_token,
        refreshToken: tokenAnswer.refresh_token,
        expiresAt: new Date(Date.parse(NOW) + 7_200_000),
        scope: tokenAnswer.scope,
      });
      const [sent] = received;
      expect(sent).toMatchObject({ method: 'POST', path: '/oauth/token' });
      expect(sent.body).toEqual({
        client_id: 'client-1',
        client_secret: 'secret-1',
        grant_type: 'refresh_token',
        refresh_token: 'old-refresh',
        redirect_uri: 'https://app.example.com/gusto/callback',
      });
      // The secret authenticates; there is no bearer token to send.
      expect(sent.headers.authorization).toBeUndefined();
      expect(sent.headers['x-gusto-api-version']).toBe(API_VERSION);
      expect(contract.checkRequest(asContractRequest(sent))).toEqual([]);
    });

    it('a used or revoked refresh token (400 invalid_grant) is GustoUnauthorized: reconnect, do not retry', async () => {
      respond(400, { error: 'invalid_grant', error_description: 'The provided authorization grant is invalid, expired, revoked' });
      const error = await oauth()
        .refresh('used')
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(GustoUnauthorized);
      expect(error).toMatchObject({ family: 'authentication_error', serviceCode: 'reauthenticate_user', status: 400 });
      expect((error as Error).message).toContain('The provided authorization grant is invalid, expired, revoked');
    });

    it('is never repeated after a 500 (a POST): transient, and the same refresh token may be sent again later', async () => {
      respond(500, {});
      await expect(oauth().refresh('r')).rejects.toMatchObject({ family: 'provider_error', outcomeUnknown: true });
      expect(received).toHaveLength(1);
    });

    it('refuses an answer without a refresh token: the next refresh would have nothing to send', async () => {
      respond(200, { ...tokenAnswer, refresh_token: null });
      const error = await oauth()
        .refresh('r')
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(GustoApiError);
      expect(error).toMatchObject({ family: 'provider_error' });
    });
  });

  describe('exchangeCode', () => {
    it('posts the OAuth2 guide’s authorization_code body and returns the pair', async () => {
      respond(200, tokenAnswer);
      const tokens = await oauth(new ManualClock('2026-03-02T10:00:00Z')).exchangeCode('code-1');

      expect(tokens.expiresAt.toISOString()).toBe('2026-03-02T12:00:00.000Z');
      expect(tokens.refreshToken).toBe(tokenAnswer.refresh_token);
      const [sent] = received;
      expect(sent.body).toEqual({
        client_id: 'client-1',
        client_secret: 'secret-1',
        code: 'code-1',
        grant_type: 'authorization_code',
        redirect_uri: 'https://app.example.com/gusto/callback',
      });
      // The document lists only the refresh_token and system_access bodies of /oauth/token; the
      // authorization_code body comes from https://docs.gusto.com/app-integrations/docs/oauth2.
      // Pinned here so a document that adds it shows up as a failing test to update.
      expect(contract.checkRequest(asContractRequest(sent))).toEqual([
        `body must have required property 'refresh_token' {"missingProperty":"refresh_token"}`,
        'body/grant_type must be equal to one of the allowed values {"allowedValues":["refresh_token"]}',
        'body/grant_type must be equal to one of the allowed values {"allowedValues":["system_access"]}',
        'body must match exactly one schema in oneOf',
      ]);
    });

    it('an invalid or expired code is GustoUnauthorized with Gusto’s message', async () => {
      respond(400, { error: 'invalid_grant', error_description: 'The authorization code has expired' });
      await expect(oauth().exchangeCode('stale')).rejects.toThrow('The authorization code has expired');
    });
  });

  describe('tokenInfo', () => {
    it('reads the company uuid, scopes and owner of a company token (schema Token-Info)', async () => {
      const info = { scope: 'companies:read public', resource: { type: 'Company', uuid: COMPANY }, resource_owner: { type: 'CompanyAdmin', uuid: '8fdc31f0-a8a7-4872-a9f1-dcb5e6f876e3' } };
      expect(contract.checkResponse('GET /v1/token_info', 200, info)).toEqual([]);
      respond(200, info);

      await expect(oauth().tokenInfo('access-1', COMPANY)).resolves.toEqual({
        companyUuid: COMPANY,
        resourceType: 'Company',
        scopes: ['companies:read', 'public'],
        resourceOwner: { type: 'CompanyAdmin', uuid: '8fdc31f0-a8a7-4872-a9f1-dcb5e6f876e3' },
      });
      const [sent] = received;
      expect(sent).toMatchObject({ method: 'GET', path: '/v1/token_info' });
      expect(sent.headers.authorization).toBe('Bearer access-1');
      expect(contract.checkRequest(asContractRequest(sent))).toEqual([]);
    });

    it('has no company for a system token', async () => {
      respond(200, { scope: 'public', resource: { type: 'Oauth::Application', uuid: COMPANY }, resource_owner: null });
      await expect(oauth().tokenInfo('system', 'app')).resolves.toMatchObject({ companyUuid: null, resourceType: 'Oauth::Application', resourceOwner: null });
    });
  });
});
