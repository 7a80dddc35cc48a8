import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { CURRENT_API_VERSION } from './api-version';

export const DOCS_PATH = 'docs';
export const OPENAPI_PATH = 'docs/openapi.json';

/** The OpenAPI document is generated from the controllers and DTOs; the docs page renders it. */
export function setupApiDocs(app: NestFastifyApplication, version: string): void {
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('Unified HR & Payroll API — benefits enrollment orchestration')
      .setDescription(
        'Employer reads, deductions and enrollments driven into payroll providers. ' +
          `Send \`Service-API-Version: ${CURRENT_API_VERSION}\` on read, deduction and disconnect operations. ` +
          'Errors are `{ code, name, service_code?, message }`.',
      )
      .setVersion(version)
      .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'Access token from POST /auth/token' }, 'access-token')
      .addBasicAuth({ type: 'http', scheme: 'basic', description: 'client_id:client_secret' }, 'client-credentials')
      .addBasicAuth({ type: 'http', scheme: 'basic', description: 'OPS_USERNAME:OPS_PASSWORD (the ops task API)' }, 'ops')
      .build(),
  );
  SwaggerModule.setup(DOCS_PATH, app, document, {
    jsonDocumentUrl: OPENAPI_PATH,
    customSiteTitle: 'Benefits orchestration API',
    swaggerOptions: { persistAuthorization: true },
  });
}
