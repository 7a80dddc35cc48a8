import { parseOrigin, parseOrigins, redirectUriOrigins } from './application-origins';

describe('parseOrigin', () => {
  it.each([
    ['https://app.example.com', 'https://app.example.com'],
    ['https://app.example.com/', 'https://app.example.com'],
    ['HTTPS://App.Example.COM', 'https://app.example.com'],
    ['https://app.example.com:443', 'https://app.example.com'],
    ['http://localhost:80', 'http://localhost'],
    ['http://localhost:5173', 'http://localhost:5173'],
    ['http://127.0.0.1:3000/', 'http://127.0.0.1:3000'],
    ['http://[::1]:8080', 'http://[::1]:8080'],
    ['https://bücher.example', 'https://xn--bcher-kva.example'],
  ])('reads %s as %s', (value, origin) => {
    expect(parseOrigin(value)).toEqual({ origin });
  });

  it.each([
    ['https://app.example.com/path', /path, query or fragment/],
    ['https://app.example.com/callback?x=1', /path, query or fragment/],
    ['https://app.example.com?', /path, query or fragment/],
    ['https://app.example.com#', /path, query or fragment/],
    ['https://app.example.com#top', /path, query or fragment/],
    ['https://app.example.com/.', /path, query or fragment/],
    ['https://app.example.com//', /path, query or fragment/],
    ['https://app.example.com\\', /path, query or fragment/],
    ['javascript:alert(1)', /http or https/],
    ['data:text/html,<script>alert(1)</script>', /spaces|http or https/],
    ['data:text/html;base64,PHNjcmlwdD4=', /http or https/],
    ['file:///etc/passwd', /http or https/],
    ['ftp://files.example.com', /http or https/],
    ['null', /not a URL/],
    ['*', /not a URL/],
    ['app.example.com', /not a URL/],
    ['', /not a URL/],
    [' https://app.example.com', /spaces/],
    ['https://user:pass@app.example.com', /user name or password/],
    [`https://${'a'.repeat(300)}.example`, /longer than 300/],
  ])('refuses %j', (value, problem) => {
    const parsed = parseOrigin(value);
    expect(parsed).toEqual({ problem: expect.stringMatching(problem) });
  });
});

describe('parseOrigins', () => {
  it('keeps order, drops repeats once normalized, and names every bad value', () => {
    expect(parseOrigins(['https://a.example', 'HTTPS://A.example/', 'http://b.example:8080'])).toEqual({
      origins: ['https://a.example', 'http://b.example:8080'],
      problems: [],
    });
    expect(parseOrigins(['https://a.example', 'https://a.example/x', 'javascript:void(0)']).problems).toEqual([
      'https://a.example/x must not have a path, query or fragment',
      'javascript:void(0) must use http or https',
    ]);
  });
});

describe('redirectUriOrigins', () => {
  it('is the distinct origins of the redirect URIs', () => {
    expect(
      redirectUriOrigins(['https://app.example.com/callback', 'https://APP.example.com:443/other?x=1', 'http://localhost:4000/cb']),
    ).toEqual(['https://app.example.com', 'http://localhost:4000']);
    expect(redirectUriOrigins([])).toEqual([]);
  });
});
