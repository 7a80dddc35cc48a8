// The real address rule (a spec may import beyond the domain): the one the sender applies.
import { judgeWebhookAddress } from '../../infrastructure/webhooks/webhook-address';
import { checkWebhookUrl as checkWith, MAX_WEBHOOK_URL_LENGTH, WebhookUrlOptions } from './webhook-url';

const live = { sandbox: false };
const sandbox = { sandbox: true };

const checkWebhookUrl = (raw: string, options: Omit<WebhookUrlOptions, 'addressRule'>) => checkWith(raw, { ...options, addressRule: judgeWebhookAddress });

function messageOf(raw: string, options: { sandbox: boolean; allowPrivate?: boolean }): string {
  const check = checkWebhookUrl(raw, options);
  if (check.ok) throw new Error(`expected ${raw} to be refused, got ${check.url}`);
  return check.message;
}

describe('checkWebhookUrl', () => {
  it('accepts a public https URL and returns it normalized', () => {
    expect(checkWebhookUrl('https://hooks.example.com/in?x=1', live)).toEqual({
      ok: true,
      url: 'https://hooks.example.com/in?x=1',
    });
    expect(checkWebhookUrl('HTTPS://Hooks.Example.COM:443/a/../in', live)).toEqual({
      ok: true,
      url: 'https://hooks.example.com/in',
    });
    expect(checkWebhookUrl('https://пример.рф/', live)).toEqual({ ok: true, url: 'https://xn--e1afmkfd.xn--p1ai/' });
    expect(checkWebhookUrl('https://8.8.8.8:8443/', live)).toEqual({ ok: true, url: 'https://8.8.8.8:8443/' });
    expect(checkWebhookUrl('https://[2606:4700::1111]/', live)).toEqual({ ok: true, url: 'https://[2606:4700::1111]/' });
  });

  it('refuses what does not parse as an absolute URL', () => {
    for (const raw of ['', 'hooks.example.com/in', '/in', 'https://', 'https://exa mple.com/']) {
      expect(messageOf(raw, live)).toBe('url must be an absolute URL (https://…)');
    }
  });

  it(`accepts ${MAX_WEBHOOK_URL_LENGTH} characters and refuses one more`, () => {
    const base = 'https://hooks.example.com/';
    const longest = base + 'a'.repeat(MAX_WEBHOOK_URL_LENGTH - base.length);
    expect(checkWebhookUrl(longest, live)).toEqual({ ok: true, url: longest });
    expect(messageOf(longest + 'a', live)).toBe(`url must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`);
  });

  it('refuses a URL that grows past the limit once normalized', () => {
    const base = 'https://hooks.example.com/';
    const raw = base + 'é'.repeat(MAX_WEBHOOK_URL_LENGTH - base.length); // each é becomes %C3%A9
    expect(messageOf(raw, live)).toMatch(/at most 2000 characters once normalized/);
  });

  it('refuses a username or password', () => {
    expect(messageOf('https://user@hooks.example.com/', live)).toBe('url must not contain a username or password');
    expect(messageOf('https://user:secret@hooks.example.com/', live)).toBe(
      'url must not contain a username or password',
    );
    expect(messageOf('https://:secret@hooks.example.com/', live)).toBe('url must not contain a username or password');
  });

  it('refuses a fragment, an empty one included', () => {
    expect(messageOf('https://hooks.example.com/in#part', live)).toBe('url must not contain a fragment (#…)');
    expect(messageOf('https://hooks.example.com/in#', live)).toBe('url must not contain a fragment (#…)');
    expect(checkWebhookUrl('https://hooks.example.com/in?q=%23', live).ok).toBe(true);
  });

  describe('scheme', () => {
    const httpsOnly = 'url must use https (http is allowed only for a loopback receiver of a sandbox application)';

    it('refuses every scheme but http and https', () => {
      for (const raw of ['ftp://hooks.example.com/', 'ws://hooks.example.com/', 'file:///etc/passwd', 'javascript:1']) {
        expect(messageOf(raw, sandbox)).toBe(httpsOnly);
      }
    });

    it('refuses http to a public host, for sandbox applications too', () => {
      expect(messageOf('http://hooks.example.com/', live)).toBe(httpsOnly);
      expect(messageOf('http://hooks.example.com/', sandbox)).toBe(httpsOnly);
    });

    it.each(['http://localhost:3000/hooks', 'http://127.0.0.1:3000/', 'http://127.9.9.9/', 'http://[::1]:8080/'])(
      'allows http to loopback %s for a sandbox application',
      (raw) => {
        expect(checkWebhookUrl(raw, sandbox)).toEqual({ ok: true, url: raw });
      },
    );

    it('allows https to loopback for a sandbox application', () => {
      expect(checkWebhookUrl('https://localhost/', sandbox)).toEqual({ ok: true, url: 'https://localhost/' });
    });
  });

  describe('loopback', () => {
    it.each([
      ['https://localhost/', 'localhost'],
      ['https://LOCALHOST./', 'localhost.'],
      ['https://api.localhost/', 'api.localhost'],
      ['https://127.0.0.1/', '127.0.0.1'],
      ['https://127.1/', '127.0.0.1'],
      ['https://0x7f000001/', '127.0.0.1'],
      ['https://[::1]/', '[::1]'],
      ['https://[::ffff:127.0.0.1]/', '[::ffff:7f00:1]'],
      ['https://[64:ff9b::7f00:1]/', '[64:ff9b::7f00:1]'],
      ['http://localhost:3000/', 'localhost'],
    ])('refuses %s for a live application', (raw, host) => {
      expect(messageOf(raw, live)).toBe(
        `url host ${host} is a loopback address; only sandbox applications may use one`,
      );
    });

    it('does not mistake a name that merely contains localhost for loopback', () => {
      expect(checkWebhookUrl('https://localhost.example.com/', live).ok).toBe(true);
      expect(checkWebhookUrl('https://mylocalhost/', live).ok).toBe(true);
    });
  });

  describe('special addresses', () => {
    it.each([
      ['https://10.1.2.3/', '10.1.2.3 is a private'],
      ['https://172.16.0.1/', '172.16.0.1 is a private'],
      ['https://192.168.1.1/', '192.168.1.1 is a private'],
      ['https://[::ffff:10.0.0.1]/', '[::ffff:a00:1] (10.0.0.1) is a private'],
      ['https://[64:ff9b::a00:1]/', '[64:ff9b::a00:1] (10.0.0.1) is a private'],
      ['https://169.254.10.10/', '169.254.10.10 is a cloud metadata'],
      ['https://169.254.169.254/', '169.254.169.254 is a cloud metadata'],
      ['https://[fe80::1]/', '[fe80::1] is a link-local'],
      ['https://[fd12:3456::1]/', '[fd12:3456::1] is a unique-local'],
      ['https://0.0.0.0/', '0.0.0.0 is an unspecified'],
      ['https://0/', '0.0.0.0 is an unspecified'],
      ['https://[::]/', '[::] is an unspecified'],
      ['https://100.64.0.1/', '100.64.0.1 is a carrier-grade NAT'],
      ['https://192.0.2.1/', '192.0.2.1 is a reserved'],
      ['https://240.0.0.1/', '240.0.0.1 is a reserved'],
      ['https://[2001:db8::1]/', '[2001:db8::1] is a reserved'],
      ['https://224.0.0.1/', '224.0.0.1 is a multicast'],
      ['https://[ff02::1]/', '[ff02::1] is a multicast'],
      ['https://255.255.255.255/', '255.255.255.255 is a broadcast'],
      // IPv6 forms of private and metadata addresses (issue 38, finding 6): the sender refuses them.
      ['https://[64:ff9b::a9fe:a9fe]/', '[64:ff9b::a9fe:a9fe] (169.254.169.254) is a cloud metadata'],
      ['https://[64:ff9b:1::a9fe:a9fe]/', '[64:ff9b:1::a9fe:a9fe] is a NAT64'],
      ['https://[2002:a9fe:a9fe::]/', '[2002:a9fe:a9fe::] is a 6to4'],
      ['https://[::a9fe:a9fe]/', '[::a9fe:a9fe] is a reserved'],
      ['https://[::10.0.0.1]/', '[::a00:1] is a reserved'],
      ['https://[::ffff:0:a9fe:a9fe]/', '[::ffff:0:a9fe:a9fe] is an IPv4-translated'],
      ['https://[100::1]/', '[100::1] is a discard-only'],
    ])('refuses %s', (raw, problem) => {
      for (const options of [sandbox, live]) {
        expect(messageOf(raw, options)).toBe(`url host ${problem} address; webhooks go to public addresses`);
      }
    });

    it('refuses what the sender refuses, and the metadata forms even where private addresses are allowed', () => {
      const onPremises = { sandbox: true, allowPrivate: true };
      for (const raw of ['https://[64:ff9b::a9fe:a9fe]/', 'https://[2002:a9fe:a9fe::]/', 'https://[::a9fe:a9fe]/', 'https://[::ffff:0:a9fe:a9fe]/', 'https://[::10.0.0.1]/']) {
        expect(checkWebhookUrl(raw, onPremises).ok).toBe(false);
      }
    });

    it('accepts the neighbours of those ranges', () => {
      for (const raw of ['https://11.0.0.1/', 'https://172.32.0.1/', 'https://100.128.0.1/', 'https://223.255.255.255/']) {
        expect(checkWebhookUrl(raw, live)).toEqual({ ok: true, url: raw });
      }
    });

    it('opens private, unique-local, link-local and CGNAT ranges when private addresses are allowed', () => {
      const onPremises = { sandbox: false, allowPrivate: true };
      for (const raw of ['https://10.1.2.3/', 'https://[fd12:3456::1]/', 'https://[fe80::1]/', 'https://100.64.0.1/']) {
        expect(checkWebhookUrl(raw, onPremises)).toEqual({ ok: true, url: raw });
      }
      expect(messageOf('https://0.0.0.0/', onPremises)).toMatch(/unspecified/);
      expect(messageOf('https://192.0.2.1/', onPremises)).toMatch(/reserved/);
      expect(messageOf('https://localhost/', onPremises)).toMatch(/loopback/);
    });

    it('keeps cloud metadata addresses closed when private addresses are allowed', () => {
      const onPremises = { sandbox: true, allowPrivate: true };
      for (const raw of ['https://169.254.169.254/', 'https://[fd00:ec2::254]/', 'https://100.100.100.200/']) {
        expect(messageOf(raw, onPremises)).toMatch(/is a cloud metadata address/);
      }
    });
  });
});
