/**
 * Validation of response bodies against Mastodon's OpenAPI description (a JSON Schema 2020-12
 * dialect), used as test data. The description is not part of the repository: it is read from
 * $OPENAPI_SPEC, or else from `../shared/openapi/mastodon-openapi.json` relative to the working
 * directory or to the repository root. Where it is absent (a CI clone, say), `openApiSkip` holds a
 * reason, and tests that pass it as their `skip` option are reported as skipped instead of failing.
 *
 *   test("matches the schema", { skip: openApiSkip }, () => {
 *     assert.deepEqual(validateSchema("Instance", body), []);
 *   });
 */
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import Ajv2020Module from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import type { ErrorObject, ValidateFunction } from "ajv";

const SPEC_RELATIVE = "../shared/openapi/mastodon-openapi.json";

/** Where the description is looked for, in order ($OPENAPI_SPEC, when set, is the only place). */
function candidatePaths(): string[] {
  const fromEnv = process.env.OPENAPI_SPEC?.trim();
  if (fromEnv) return [resolve(fromEnv)];
  const paths = [resolve(process.cwd(), SPEC_RELATIVE)];
  // The repository root is this file's parent directory, whatever the working directory is.
  paths.push(resolve(fileURLToPath(new URL("..", import.meta.url)), SPEC_RELATIVE));
  return [...new Set(paths)];
}

/** The file the description was read from, or undefined when none of the candidates exists. */
export const openApiPath: string | undefined = candidatePaths().find((path) => existsSync(path));

/** Whether the description could be loaded (schema tests run only then). */
export const openApiAvailable = openApiPath !== undefined;

/** `false` when the description is present, else the reason to skip (for a test's `skip` option). */
export const openApiSkip: string | false = openApiAvailable
  ? false
  : `Mastodon's OpenAPI description was not found (looked at ${candidatePaths().join(", ")}); set OPENAPI_SPEC to its path`;

// ajv ships CommonJS whose declared default export is `exports.default`; at run time Node hands the
// ES module importer `module.exports`. Either way, the constructor is one of the two.
type Ajv2020Class = typeof Ajv2020Module.default;
const Ajv2020 = ((Ajv2020Module as unknown as { default?: Ajv2020Class }).default ?? Ajv2020Module) as Ajv2020Class;
type AddFormats = typeof addFormatsModule.default;
const addFormats = ((addFormatsModule as unknown as { default?: AddFormats }).default ??
  addFormatsModule) as AddFormats;

interface OpenApiDocument {
  components: { schemas: Record<string, unknown> };
  paths: Record<
    string,
    Record<string, { responses?: Record<string, { content?: Record<string, { schema?: unknown }> }> }>
  >;
}

let ajv: InstanceType<Ajv2020Class> | undefined;
let spec: OpenApiDocument | undefined;
const compiled = new Map<string, ValidateFunction>();

function load(): { ajv: InstanceType<Ajv2020Class>; spec: OpenApiDocument } {
  if (!openApiPath) throw new Error(openApiSkip || "OpenAPI description unavailable");
  if (!ajv || !spec) {
    spec = JSON.parse(readFileSync(openApiPath, "utf8")) as OpenApiDocument;
    const instance = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
    addFormats(instance);
    instance.addFormat("iso-639-1", /^[a-z]{2}$/);
    instance.addSchema(spec as object, "spec");
    ajv = instance;
  }
  return { ajv, spec };
}

function formatErrors(errors: ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).map(
    (e) =>
      `${e.instancePath || "/"} ${e.message ?? e.keyword}${e.params && Object.keys(e.params).length ? ` ${JSON.stringify(e.params)}` : ""}`,
  );
}

function validateWith(key: string, ref: string, value: unknown): string[] {
  const { ajv } = load();
  let validate = compiled.get(key);
  if (!validate) {
    validate = ajv.compile({ $ref: ref });
    compiled.set(key, validate);
  }
  return validate(value) ? [] : formatErrors(validate.errors);
}

/** Names of the component schemas (`Instance`, `V1Instance`, `CustomEmoji`, `Rule`, …). */
export function schemaNames(): string[] {
  return Object.keys(load().spec.components.schemas);
}

/**
 * Validates `value` against `#/components/schemas/<componentName>`: the list of errors
 * (`<JSON pointer> <message>`), empty when it is valid. Throws for an unknown component name.
 */
export function validateSchema(componentName: string, value: unknown): string[] {
  if (!Object.hasOwn(load().spec.components.schemas, componentName)) {
    throw new Error(`No component schema named ${componentName} in the OpenAPI description`);
  }
  return validateWith(`schema:${componentName}`, `spec#/components/schemas/${componentName}`, value);
}

const pointerEscape = (segment: string) => segment.replaceAll("~", "~0").replaceAll("/", "~1");

/**
 * Validates a response body against the JSON schema an operation declares for it (e.g.
 * `validateResponse("get", "/api/v1/instance/activity", body)`). Throws when the operation or
 * response is not described.
 */
export function validateResponse(method: string, path: string, value: unknown, status = 200): string[] {
  const { spec } = load();
  const verb = method.toLowerCase();
  const schema = spec.paths[path]?.[verb]?.responses?.[String(status)]?.content?.["application/json"]?.schema;
  if (schema === undefined)
    throw new Error(`The OpenAPI description has no JSON ${status} response for ${method.toUpperCase()} ${path}`);
  const ref = ["spec#", "paths", path, verb, "responses", String(status), "content", "application/json", "schema"]
    .map((s, i) => (i === 0 ? s : pointerEscape(s)))
    .join("/");
  return validateWith(`response:${verb} ${path} ${status}`, ref, value);
}
