import { addressRefusal, judgeWebhookAddress } from './webhook-address';

const strict = { allowLoopback: false, allowPrivate: false };
const open = { allowLoopback: true, allowPrivate: true };

describe('addressRefusal', () => {
  it.each([
    ['8.8.8.8', null],
    ['2606:4700::1111', null],
    ['127.0.0.1', 'address 127.0.0.1 is a loopback address'],
    ['::1', 'address ::1 is a loopback address'],
    ['10.0.0.5', 'address 10.0.0.5 is a private address'],
    ['fd12::1', 'address fd12::1 is a unique-local address'],
    ['fe80::1', 'address fe80::1 is a link-local address'],
    ['100.64.1.1', 'address 100.64.1.1 is a carrier-grade NAT address'],
    ['169.254.169.254', 'address 169.254.169.254 is a cloud metadata address'],
    ['fd00:ec2::254', 'address fd00:ec2::254 is a cloud metadata address'],
    ['100.100.100.200', 'address 100.100.100.200 is a cloud metadata address'],
    ['0.0.0.0', 'address 0.0.0.0 is an unspecified address'],
    ['224.0.0.1', 'address 224.0.0.1 is a multicast address'],
    ['255.255.255.255', 'address 255.255.255.255 is a broadcast address'],
    ['192.0.2.1', 'address 192.0.2.1 is a reserved address'],
    ['2001:db8::1', 'address 2001:db8::1 is a reserved address'],
    ['2001:2::1', 'address 2001:2::1 is a special-purpose address (benchmarking)'],
    ['2002:7f00:1::', 'address 2002:7f00:1:: is a 6to4 address'],
    ['2001:0:4136:e378::1', 'address 2001:0:4136:e378::1 is a Teredo address'],
    ['::7f00:1', 'address ::7f00:1 is a reserved address'],
    ['::ffff:10.0.0.5', 'address ::ffff:10.0.0.5 (10.0.0.5) is a private address'],
    ['64:ff9b::7f00:1', 'address 64:ff9b::7f00:1 (127.0.0.1) is a loopback address'],
    ['64:ff9b::808:808', null],
    ['::ffff:8.8.8.8', null],
    ['not-an-ip', 'address not-an-ip is not an IP address'],
  ])('%s with nothing allowed → %s', (ip, refusal) => {
    expect(addressRefusal(ip, strict)).toBe(refusal);
  });

  describe('IPv6 forms of private and metadata addresses (issue 38, finding 6)', () => {
    it.each([
      ['64:ff9b::a9fe:a9fe', '169.254.169.254'],
      ['64:ff9b:1::a9fe:a9fe', '169.254.169.254'],
      ['2002:a9fe:a9fe::', '169.254.169.254'],
      ['::a9fe:a9fe', '169.254.169.254'],
      ['::169.254.169.254', '169.254.169.254'],
      ['::10.0.0.1', '10.0.0.1'],
      ['::ffff:0:a9fe:a9fe', '169.254.169.254'],
      ['::ffff:0:10.0.0.1', '10.0.0.1'],
      ['100::1', null],
    ])('refuses %s whatever the policy, as it refuses the IPv4 address it carries (%s)', (ip, carried) => {
      for (const policy of [strict, open, { allowLoopback: true, allowPrivate: false }, { allowLoopback: false, allowPrivate: true }]) {
        expect([ip, policy, addressRefusal(ip, policy)]).toEqual([ip, policy, expect.any(String)]);
      }
      if (carried) {
        expect(addressRefusal(carried, strict)).toMatch(/is a (private|cloud metadata) address$/);
        if (carried.startsWith('169.254.')) expect(addressRefusal(carried, open)).toMatch(/cloud metadata/);
      }
    });
  });

  it('opens loopback and the private ranges only when told, and never metadata or unspecified', () => {
    expect(addressRefusal('127.0.0.1', { allowLoopback: true, allowPrivate: false })).toBeNull();
    expect(addressRefusal('::ffff:127.0.0.1', { allowLoopback: true, allowPrivate: false })).toBeNull();
    expect(addressRefusal('10.0.0.5', { allowLoopback: true, allowPrivate: false })).not.toBeNull();
    expect(addressRefusal('127.0.0.1', { allowLoopback: false, allowPrivate: true })).not.toBeNull();
    for (const ip of ['10.0.0.5', '172.16.0.1', '192.168.0.1', 'fd12::1', 'fe80::1', '100.64.0.1', '::ffff:10.0.0.5', '64:ff9b::a00:5']) {
      expect([ip, addressRefusal(ip, { allowLoopback: false, allowPrivate: true })]).toEqual([ip, null]);
    }
    for (const ip of ['0.0.0.0', '::', '169.254.169.254', '100.100.100.200', '224.0.0.1', '192.0.2.1', '64:ff9b::a9fe:a9fe', '::10.0.0.1']) {
      expect([ip, addressRefusal(ip, open)]).toEqual([ip, expect.any(String)]);
    }
  });

  it('tells loopback apart, so a sandbox application may use http to it', () => {
    expect(judgeWebhookAddress('127.9.9.9', open)).toEqual({ allowed: true, loopback: true });
    expect(judgeWebhookAddress('::1', strict)).toMatchObject({ allowed: false, loopback: true });
    expect(judgeWebhookAddress('8.8.8.8', strict)).toEqual({ allowed: true, loopback: false });
    expect(judgeWebhookAddress('10.0.0.1', strict)).toEqual({ allowed: false, loopback: false, carried: null, what: 'a private address' });
  });
});
