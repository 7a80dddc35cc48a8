import { applyDecorators, Header } from '@nestjs/common';

/** A response carrying a secret (an access token): no cache may keep it (RFC 6749 §5.1). */
export const NoStore = (): MethodDecorator => applyDecorators(Header('Cache-Control', 'no-store'), Header('Pragma', 'no-cache'));
