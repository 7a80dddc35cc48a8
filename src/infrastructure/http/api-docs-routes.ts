import { INestApplicationContext, Type } from '@nestjs/common';
import { PATH_METADATA } from '@nestjs/common/constants';
import { MetadataScanner, ModulesContainer, Reflector } from '@nestjs/core';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import { DECORATORS } from '@nestjs/swagger';
import { DomainError } from '../../domain/shared/domain-error';
import { ApiVersionGuard } from './api-version';

/** A controller method that serves a route, with the operation id the OpenAPI generator gives it. */
export interface RouteHandler {
  controller: Type;
  methodName: string;
  handler: (...args: unknown[]) => unknown;
  operationId: string;
}

/** Every route handler of every controller the application registered. */
export function routeHandlersOf(app: INestApplicationContext): RouteHandler[] {
  const scanner = new MetadataScanner();
  const controllers = new Set<Type>();
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) if (wrapper.metatype) controllers.add(wrapper.metatype as Type);
  }
  return [...controllers].flatMap((controller) =>
    scanner
      .getAllMethodNames(controller.prototype)
      .map((methodName) => ({ methodName, handler: controller.prototype[methodName] as RouteHandler['handler'] }))
      .filter(({ handler }) => Reflect.getMetadata(PATH_METADATA, handler) !== undefined)
      .map(({ methodName, handler }) => ({ controller, methodName, handler, operationId: operationIdOf(controller, methodName, handler) })),
  );
}

/** @nestjs/swagger's id: `@ApiOperation({ operationId })` if given, else `<Controller>_<method>`. */
function operationIdOf(controller: Type, methodName: string, handler: RouteHandler['handler']): string {
  const explicit = (Reflect.getMetadata(DECORATORS.API_OPERATION, handler) as { operationId?: string } | undefined)?.operationId;
  return explicit ?? `${controller.name}_${methodName}`;
}

/** Whether an operation of the document is the handler's (a handler with several paths has `[n]` ids). */
export function isOperationOf(route: RouteHandler, operationId: string | undefined): boolean {
  return operationId === route.operationId || (operationId?.startsWith(`${route.operationId}[`) ?? false);
}

const versionGuard = new ApiVersionGuard(new Reflector());

/**
 * Whether calls to the handler must carry `Service-API-Version`. Asked of the guard that enforces
 * it (with a request that has no headers), so the document can never disagree with the service.
 */
export function requiresApiVersion(route: RouteHandler): boolean {
  const context = new ExecutionContextHost([{ headers: {} }, {}, undefined], route.controller, route.handler);
  context.setType('http');
  try {
    return !versionGuard.canActivate(context);
  } catch (error) {
    if (error instanceof DomainError && error.serviceCode === 'missing_version_header') return true;
    throw error;
  }
}
