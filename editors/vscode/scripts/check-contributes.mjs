// Checks package.json's contributions against the files and the code they name, and every
// regular expression of the TextMate grammars against Oniguruma (the engine VS Code uses).
// Prints each problem and exits 1 when there is one. Run by `npm test`.
//
//   node scripts/check-contributes.mjs [extension folder]

import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(process.argv[2] ?? join(here, '..'));
const require = createRequire(join(here, 'check-contributes.mjs'));
const problems = [];
const problem = (message) => problems.push(message);

function readJson(relative) {
  const file = join(root, relative);
  if (!existsSync(file)) {
    problem(`${relative}: missing`);
    return undefined;
  }
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    problem(`${relative}: not valid JSON (${error.message})`);
    return undefined;
  }
}

const isObject = (value) => typeof value === 'object' && value !== null && !Array.isArray(value);
const fileOf = (path) => path.replace(/^\.\//, '');

// Grammars that VS Code ships; a grammar may include them for embedded doc string content.
const BUILT_IN_SCOPES = new Set(['source.json', 'text.xml', 'text.html.markdown']);
// The server's code lenses name these; the extension must implement them.
const LENS_COMMANDS = ['saffron.run', 'saffron.runFeature', 'saffron.reviewProposal'];
const REQUIRED_COMMANDS = [...LENS_COMMANDS, 'saffron.refreshSnippets', 'saffron.restartServer'];
const REQUIRED_LANGUAGES = { gherkin: '.feature', saffron: '.saffron' };

const manifest = readJson('package.json');
const source = existsSync(join(root, 'src/extension.ts')) ? readFileSync(join(root, 'src/extension.ts'), 'utf8') : '';
if (source === '') {
  problem('src/extension.ts: missing');
}

function checkManifest() {
  for (const key of ['name', 'publisher', 'version', 'main', 'engines']) {
    if (manifest[key] === undefined) {
      problem(`package.json: "${key}" is missing (vsce needs it)`);
    }
  }
  const engine = manifest.engines?.vscode;
  const types = manifest.devDependencies?.['@types/vscode'];
  const version = (text) => /(\d+)\.(\d+)/.exec(text ?? '')?.slice(1).map(Number);
  const [engineMajor, engineMinor] = version(engine) ?? [];
  const [typesMajor, typesMinor] = version(types) ?? [];
  if (engineMajor === undefined || typesMajor === undefined) {
    problem('package.json: engines.vscode and devDependencies["@types/vscode"] must both name a version');
  } else if (typesMajor > engineMajor || (typesMajor === engineMajor && typesMinor > engineMinor)) {
    problem(`package.json: @types/vscode ${types} is newer than engines.vscode ${engine}; vsce refuses that`);
  }
  if (manifest.main !== './dist/extension.js') {
    problem(`package.json: "main" is ${manifest.main}, but scripts/build.mjs writes ./dist/extension.js`);
  }
  if (!/--no-dependencies/.test(manifest.scripts?.package ?? '')) {
    problem('package.json: the package script must pass --no-dependencies (the bundle holds the dependencies)');
  }
}

function checkLanguages(contributes) {
  const languages = contributes.languages ?? [];
  const ids = new Set();
  for (const language of languages) {
    if (ids.has(language.id)) {
      problem(`languages: "${language.id}" is contributed twice`);
    }
    ids.add(language.id);
    if (language.configuration !== undefined) {
      const configuration = readJson(fileOf(language.configuration));
      if (configuration !== undefined) {
        checkLanguageConfiguration(fileOf(language.configuration), configuration);
      }
    } else {
      problem(`languages: "${language.id}" has no language configuration`);
    }
  }
  for (const [id, extension] of Object.entries(REQUIRED_LANGUAGES)) {
    const language = languages.find((candidate) => candidate.id === id);
    if (language === undefined) {
      problem(`languages: "${id}" is not contributed`);
    } else if (!(language.extensions ?? []).includes(extension)) {
      problem(`languages: "${id}" does not claim ${extension}`);
    }
  }
  return ids;
}

function checkLanguageConfiguration(file, configuration) {
  if (configuration.comments?.lineComment !== '#') {
    problem(`${file}: comments.lineComment must be "#"`);
  }
  const pairs = (list, key) => {
    if (!Array.isArray(list)) {
      problem(`${file}: "${key}" must be an array`);
      return;
    }
    for (const pair of list) {
      const ok = Array.isArray(pair)
        ? pair.length === 2 && pair.every((side) => typeof side === 'string')
        : isObject(pair) && typeof pair.open === 'string' && typeof pair.close === 'string';
      if (!ok) {
        problem(`${file}: "${key}" holds ${JSON.stringify(pair)}, which is not a pair`);
      }
    }
  };
  pairs(configuration.brackets, 'brackets');
  pairs(configuration.autoClosingPairs, 'autoClosingPairs');
  pairs(configuration.surroundingPairs, 'surroundingPairs');
  if (!(configuration.autoClosingPairs ?? []).some((pair) => pair.open === '"')) {
    problem(`${file}: double quotes must auto-close`);
  }
  for (const key of ['wordPattern']) {
    if (configuration[key] !== undefined) {
      try {
        new RegExp(configuration[key], 'u');
      } catch (error) {
        problem(`${file}: ${key} is not a valid regular expression (${error.message})`);
      }
    }
  }
  for (const rule of configuration.onEnterRules ?? []) {
    try {
      new RegExp(rule.beforeText);
    } catch (error) {
      problem(`${file}: onEnterRules beforeText is not a valid regular expression (${error.message})`);
    }
  }
}

function collectRules(node, visit) {
  if (Array.isArray(node)) {
    node.forEach((child) => collectRules(child, visit));
  } else if (isObject(node)) {
    visit(node);
    for (const value of Object.values(node)) {
      collectRules(value, visit);
    }
  }
}

async function checkGrammars(contributes, languageIds) {
  const grammars = contributes.grammars ?? [];
  const contributedScopes = new Set(grammars.map((grammar) => grammar.scopeName));
  const onig = await loadOniguruma();
  for (const contribution of grammars) {
    const file = fileOf(contribution.path ?? '');
    if (contribution.language !== undefined && !languageIds.has(contribution.language)) {
      problem(`grammars: ${file} is for the language "${contribution.language}", which is not contributed`);
    }
    const grammar = readJson(file);
    if (grammar === undefined) {
      continue;
    }
    if (grammar.scopeName !== contribution.scopeName) {
      problem(`${file}: scopeName is "${grammar.scopeName}", package.json says "${contribution.scopeName}"`);
    }
    const repository = grammar.repository ?? {};
    collectRules(grammar, (rule) => {
      if (typeof rule.include === 'string') {
        const include = rule.include;
        if (include.startsWith('#')) {
          if (!(include.slice(1) in repository)) {
            problem(`${file}: include "${include}" names no repository entry`);
          }
        } else if (include !== '$self' && include !== '$base') {
          const scope = include.split('#')[0];
          if (!contributedScopes.has(scope) && !BUILT_IN_SCOPES.has(scope)) {
            problem(`${file}: include "${include}" names a grammar that is neither contributed nor built in`);
          }
        }
      }
      for (const key of ['match', 'begin', 'end', 'while']) {
        if (typeof rule[key] !== 'string') {
          continue;
        }
        // `end` may refer to the captures of `begin` (\1); give them something to refer to.
        const pattern = key === 'end' || key === 'while' ? rule[key].replace(/\\(\d)/g, 'x') : rule[key];
        const error = onig.compileError(pattern);
        if (error !== undefined) {
          problem(`${file}: ${key} /${rule[key]}/ does not compile in Oniguruma: ${error}`);
        }
      }
    });
  }
  const allGrammarText = grammars
    .map((contribution) => (existsSync(join(root, fileOf(contribution.path ?? ''))) ? readFileSync(join(root, fileOf(contribution.path)), 'utf8') : ''))
    .join('\n');
  for (const contribution of grammars) {
    for (const [name, embedded] of Object.entries(contribution.embeddedLanguages ?? {})) {
      if (!allGrammarText.includes(`"${name}"`)) {
        problem(`grammars: embedded scope ${name} (${embedded}) appears in no grammar`);
      }
    }
  }
  for (const id of languageIds) {
    if (!grammars.some((grammar) => grammar.language === id)) {
      problem(`grammars: the language "${id}" has no grammar`);
    }
  }
  const gherkin = grammars.find((grammar) => grammar.language === 'gherkin');
  const grammar = gherkin === undefined ? undefined : readJson(fileOf(gherkin.path));
  if (grammar !== undefined) {
    for (const fileType of ['feature', 'saffron']) {
      if (!(grammar.fileTypes ?? []).includes(fileType)) {
        problem(`${fileOf(gherkin.path)}: fileTypes lacks "${fileType}" (JetBrains' TextMate support maps files by it)`);
      }
    }
  }
}

async function loadOniguruma() {
  const oniguruma = require('vscode-oniguruma');
  const wasm = readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm'));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  return {
    compileError(pattern) {
      try {
        const scanner = new oniguruma.OnigScanner([pattern]);
        scanner.dispose();
        return undefined;
      } catch (error) {
        return error.message;
      }
    },
  };
}

function checkCommands(contributes) {
  const contributed = new Set((contributes.commands ?? []).map((command) => command.command));
  const registered = new Set([...source.matchAll(/registerCommand\(\s*'([^']+)'/g)].map((match) => match[1]));
  for (const command of REQUIRED_COMMANDS) {
    if (!contributed.has(command)) {
      problem(`commands: "${command}" is not contributed`);
    }
  }
  for (const command of contributed) {
    if (!registered.has(command)) {
      problem(`commands: "${command}" is contributed but src/extension.ts registers no handler for it`);
    }
  }
  for (const command of registered) {
    if (!contributed.has(command)) {
      problem(`commands: src/extension.ts registers "${command}", which package.json does not contribute`);
    }
  }
  for (const [menu, entries] of Object.entries(contributes.menus ?? {})) {
    for (const entry of entries) {
      if (!contributed.has(entry.command)) {
        problem(`menus.${menu}: "${entry.command}" is not a contributed command`);
      }
    }
  }
}

function checkConfiguration(contributes) {
  const properties = contributes.configuration?.properties ?? {};
  const path = properties['saffron.path'];
  if (path === undefined || path.type !== 'string' || path.default !== 'saffron') {
    problem('configuration: "saffron.path" must be a string setting defaulting to "saffron"');
  }
  const trace = properties['saffron.trace.server'];
  if (trace === undefined || JSON.stringify(trace.enum) !== JSON.stringify(['off', 'messages', 'verbose'])) {
    problem('configuration: "saffron.trace.server" must be the enum off / messages / verbose');
  }
  if (!/new LanguageClient\(\s*'saffron'/.test(source)) {
    problem("src/extension.ts: the LanguageClient id must be 'saffron', or saffron.trace.server is not read");
  }
  for (const key of Object.keys(properties)) {
    if (!key.startsWith('saffron.')) {
      problem(`configuration: "${key}" is outside the saffron. namespace`);
    }
  }
  const restricted = manifest.capabilities?.untrustedWorkspaces?.restrictedConfigurations ?? [];
  if (!restricted.includes('saffron.path')) {
    problem('capabilities: saffron.path names a program to run, so it must be a restricted configuration');
  }
}

function checkTasks(contributes) {
  const types = (contributes.taskDefinitions ?? []).map((definition) => definition.type);
  if (!types.includes('saffron') || !/const TASK_TYPE = 'saffron'/.test(source)) {
    problem('taskDefinitions: the "saffron" task type must be contributed and used by src/extension.ts');
  }
  const matchers = (contributes.problemMatchers ?? []).map((matcher) => matcher.name);
  for (const match of source.matchAll(/'\$([a-z-]+)'/g)) {
    if (!matchers.includes(match[1])) {
      problem(`problemMatchers: src/extension.ts uses $${match[1]}, which is not contributed`);
    }
  }
  for (const matcher of contributes.problemMatchers ?? []) {
    try {
      const regexp = new RegExp(matcher.pattern.regexp);
      if (!regexp.test('features/orders.saffron:14:13: error: unknown StepSet \'signed on\'')) {
        problem(`problemMatchers: ${matcher.name} does not match a line of saffron's problem format`);
      }
    } catch (error) {
      problem(`problemMatchers: ${matcher.name} has an invalid regexp (${error.message})`);
    }
  }
}

if (manifest !== undefined) {
  const contributes = manifest.contributes ?? {};
  checkManifest();
  const languageIds = checkLanguages(contributes);
  await checkGrammars(contributes, languageIds);
  checkCommands(contributes);
  checkConfiguration(contributes);
  checkTasks(contributes);
}

if (problems.length > 0) {
  for (const message of problems) {
    console.error(`✗ ${message}`);
  }
  console.error(`check-contributes: ${problems.length} problem(s) in ${root}`);
  process.exit(1);
}
console.log(`check-contributes: package.json, language configuration and grammars agree (${root})`);
