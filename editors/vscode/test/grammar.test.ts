// The TextMate grammar, tokenized the way VS Code does it (vscode-textmate on Oniguruma), on the
// repository's example features and on lines written for each construct.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { before, describe, it } from 'node:test';

import * as oniguruma from 'vscode-oniguruma';
import * as textmate from 'vscode-textmate';

const extensionRoot = path.resolve(__dirname, '../..');
const repositoryRoot = path.resolve(extensionRoot, '../..');

interface Token {
  text: string;
  scopes: string[];
}

let gherkin: textmate.IGrammar;
let saffron: textmate.IGrammar;
let gherkinWithoutJson: textmate.IGrammar;

/** Stands in for the JSON grammar VS Code ships, to see that doc string content reaches it. */
const JSON_STUB = { scopeName: 'source.json', patterns: [{ match: '\\d+', name: 'constant.numeric.json' }] };

async function loadGrammars(): Promise<void> {
  const wasm = fs.readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm'));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  const files: Record<string, string> = {
    'source.gherkin': path.join(extensionRoot, 'syntaxes/gherkin.tmLanguage.json'),
    'source.saffron': path.join(extensionRoot, 'syntaxes/saffron.tmLanguage.json'),
  };
  const registry = (withJson: boolean): textmate.Registry =>
    new textmate.Registry({
      onigLib: Promise.resolve({
        createOnigScanner: (patterns: string[]) => oniguruma.createOnigScanner(patterns),
        createOnigString: (text: string) => oniguruma.createOnigString(text),
      }),
      loadGrammar: async (scopeName: string) => {
        if (scopeName === 'source.json' && withJson) {
          return textmate.parseRawGrammar(JSON.stringify(JSON_STUB), 'json.tmLanguage.json');
        }
        const file = files[scopeName];
        return file === undefined ? null : textmate.parseRawGrammar(fs.readFileSync(file, 'utf8'), file);
      },
    });
  const full = registry(true);
  const loadedGherkin = await full.loadGrammar('source.gherkin');
  const loadedSaffron = await full.loadGrammar('source.saffron');
  const loadedWithoutJson = await registry(false).loadGrammar('source.gherkin');
  assert.ok(loadedGherkin !== null && loadedSaffron !== null && loadedWithoutJson !== null, 'the grammars load');
  gherkin = loadedGherkin;
  saffron = loadedSaffron;
  gherkinWithoutJson = loadedWithoutJson;
}

function tokenizeLines(grammar: textmate.IGrammar, lines: string[]): Token[][] {
  let state = textmate.INITIAL;
  return lines.map((line) => {
    const result = grammar.tokenizeLine(line, state);
    state = result.ruleStack;
    return result.tokens.map((token) => ({
      text: line.slice(token.startIndex, token.endIndex),
      scopes: token.scopes,
    }));
  });
}

function tokenize(text: string, grammar: textmate.IGrammar = gherkin): Token[][] {
  return tokenizeLines(grammar, text.split(/\r?\n/));
}

/** The tokens that cover the first occurrence of `text` on the line. */
function tokensOf(line: Token[], text: string): Token[] {
  const lineText = line.map((token) => token.text).join('');
  const start = lineText.indexOf(text);
  assert.ok(start >= 0, `"${text}" is on the line "${lineText}"`);
  const end = start + text.length;
  const covering: Token[] = [];
  let offset = 0;
  for (const token of line) {
    const tokenEnd = offset + token.text.length;
    if (tokenEnd > start && offset < end) {
      covering.push(token);
    }
    offset = tokenEnd;
  }
  return covering;
}

const hasScope = (scopes: string[], scope: string): boolean =>
  scopes.some((candidate) => candidate === scope || candidate.startsWith(`${scope}.`));

/** Every token of `text` has `scope` (or a scope under it). */
function assertScope(line: Token[] | undefined, text: string, scope: string): void {
  assert.ok(line !== undefined, 'the line exists');
  for (const token of tokensOf(line, text)) {
    assert.ok(hasScope(token.scopes, scope), `"${token.text}" of "${text}" has ${scope}; its scopes are ${token.scopes.join(', ')}`);
  }
}

/** No token of `text` has a scope starting with `prefix`. */
function assertNoScope(line: Token[] | undefined, text: string, prefix: string): void {
  assert.ok(line !== undefined, 'the line exists');
  for (const token of tokensOf(line, text)) {
    assert.ok(
      !token.scopes.some((scope) => scope.startsWith(prefix)),
      `"${token.text}" of "${text}" has no ${prefix}*; it has ${token.scopes.join(', ')}`,
    );
  }
}

function lineOf(tokens: Token[][], text: string): Token[] | undefined {
  return tokens.find((line) => line.map((token) => token.text).join('').includes(text));
}

before(loadGrammars);

describe('the example project', () => {
  it('highlights features/orders.saffron', () => {
    const lines = tokenize(fs.readFileSync(path.join(repositoryRoot, 'features/orders.saffron'), 'utf8'));
    assertScope(lineOf(lines, '@orders'), '@orders', 'entity.name.tag.gherkin');
    assertScope(lineOf(lines, 'Feature: Orders'), 'Feature', 'keyword.control.block.gherkin');
    assertScope(lineOf(lines, 'Feature: Orders'), 'Orders', 'entity.name.section.gherkin');
    assertNoScope(lineOf(lines, 'The orders page lists'), 'The orders page lists', 'keyword');
    assertScope(lineOf(lines, 'Background:'), 'Background', 'keyword.control.block.gherkin');
    const invocation = lineOf(lines, 'StepSet signed in');
    assertScope(invocation, 'StepSet', 'keyword.control.step-set.saffron');
    assertScope(invocation, 'signed in as the demo user', 'entity.name.function.step-set.saffron');
    const search = lineOf(lines, 'When I search orders for');
    assertScope(search, 'When', 'keyword.control.step.gherkin');
    assertNoScope(search, 'I search orders for ', 'string');
    assertScope(search, 'Ada Lovelace', 'string.quoted.double.gherkin');
    assertScope(lineOf(lines, 'shows 2 orders'), '2', 'constant.numeric.gherkin');
    assertScope(lineOf(lines, 'And every order'), 'And', 'keyword.operator.step.gherkin');
    assertScope(lineOf(lines, '      Deliver before noon'), 'Deliver before noon', 'string.unquoted.doc-string.gherkin');
    assertScope(lineOf(lines, 'is no longer listed'), '#1004', 'string.quoted.double.gherkin');
    assertNoScope(lineOf(lines, 'is no longer listed'), '#1004', 'comment');
    assertScope(lineOf(lines, '@wip'), '@wip', 'entity.name.tag.gherkin');
  });

  it('highlights the doc string delimiters and what follows them', () => {
    const lines = tokenize(fs.readFileSync(path.join(repositoryRoot, 'features/orders.saffron'), 'utf8'));
    const index = lines.findIndex((line) => line.map((token) => token.text).join('').trim() === '"""');
    assert.ok(index > 0, 'orders.saffron has a doc string');
    assertScope(lines[index], '"""', 'punctuation.definition.string.begin.gherkin');
    assertScope(lines[index + 2], '"""', 'punctuation.definition.string.end.gherkin');
    assertScope(lines[index + 3], 'Then', 'keyword.control.step.gherkin');
  });

  it('highlights tables, placeholders and outlines in features/new_order.saffron', () => {
    const lines = tokenize(fs.readFileSync(path.join(repositoryRoot, 'features/new_order.saffron'), 'utf8'));
    const outline = lineOf(lines, 'Scenario Outline:');
    assertScope(outline, 'Scenario Outline', 'keyword.control.block.gherkin');
    assertScope(outline, '<customer>', 'variable.parameter.placeholder.gherkin');
    const row = lineOf(lines, '| Customer | <customer> |');
    assertScope(row, '|', 'punctuation.separator.table.gherkin');
    assertScope(row, 'Customer', 'string.unquoted.table-cell.gherkin');
    assertScope(row, '<customer>', 'variable.parameter.placeholder.gherkin');
    assertScope(lineOf(lines, 'Examples:'), 'Examples', 'keyword.control.block.gherkin');
    assertScope(lineOf(lines, 'StepSet a new order form'), 'StepSet', 'keyword.control.step-set.saffron');
  });

  it('highlights StepSet definitions in features/shared.steps.saffron', () => {
    const lines = tokenize(fs.readFileSync(path.join(repositoryRoot, 'features/shared.steps.saffron'), 'utf8'));
    assertScope(lines[0], '# Sets any feature', 'comment.line.number-sign.gherkin');
    const definition = lineOf(lines, 'StepSet: signed in as the demo user');
    assertScope(definition, 'StepSet', 'keyword.control.step-set.saffron');
    assertScope(definition, 'signed in as the demo user', 'entity.name.function.step-set.saffron');
    assertScope(lineOf(lines, 'Given I am on the sign-in page'), 'Given', 'keyword.control.step.gherkin');
  });

  it('gives .saffron files the same scopes through source.saffron', () => {
    const text = fs.readFileSync(path.join(repositoryRoot, 'features/orders.saffron'), 'utf8');
    const strip = (lines: Token[][]): string[][][] =>
      lines.map((line) => line.map((token) => token.scopes.filter((scope) => !scope.startsWith('source.'))));
    assert.deepEqual(strip(tokenize(text, saffron)), strip(tokenize(text, gherkin)));
  });
});

describe('constructs', () => {
  it('reads the language header, Fixture, tokens, escapes and tag comments', () => {
    const lines = tokenize(
      [
        '# language: en',
        '@smoke @cart # nightly only',
        'Feature: Cart',
        '  Fixture: a seeded customer',
        '    Given a customer "{unique:customer}" exists',
        '    And I sign in as:',
        '      | Email    | {env:SHOP_USER} |',
        '      | Password | a \\| b          |',
        '    * I wait until {date+3}',
      ].join('\n'),
    );
    assertScope(lines[0], 'language', 'keyword.other.language.gherkin');
    assertScope(lines[0], 'en', 'constant.language.gherkin');
    assertScope(lines[1], '@cart', 'entity.name.tag.gherkin');
    assertScope(lines[1], '# nightly only', 'comment.line.number-sign.gherkin');
    assertScope(lines[3], 'Fixture', 'keyword.control.fixture.saffron');
    assertScope(lines[3], 'a seeded customer', 'entity.name.section.fixture.saffron');
    assertScope(lines[4], '{unique:customer}', 'constant.other.token.saffron');
    assertScope(lines[6], '{env:SHOP_USER}', 'constant.other.token.saffron');
    assertScope(lines[7], '\\|', 'constant.character.escape.gherkin');
    assertScope(lines[8], '*', 'keyword.operator.step.gherkin');
    assertScope(lines[8], '{date+3}', 'constant.other.token.saffron');
  });

  it('embeds JSON doc strings and keeps other media types plain', () => {
    const lines = tokenize(
      ['    Given the API returns:', '      ```json', '      {"id": 1}', '      ```', '    Then I see it'].join('\n'),
    );
    assertScope(lines[1], 'json', 'entity.other.attribute-name.media-type.gherkin');
    assertScope(lines[2], '{"id": 1}', 'meta.embedded.block.json');
    assertScope(lines[2], '1', 'constant.numeric.json');
    assertScope(lines[3], '```', 'punctuation.definition.string.end.gherkin');
    assertScope(lines[4], 'Then', 'keyword.control.step.gherkin');
    // Where no JSON grammar is installed (some TextMate hosts), the content is a plain doc string.
    const withoutJson = tokenize(['      ```json', '      {"id": 1}', '      ```'].join('\n'), gherkinWithoutJson);
    assertScope(withoutJson[1], '{"id": 1}', 'string.unquoted.doc-string.gherkin');
    const plain = tokenize(['    """text/plain', '    Then not a step', '    """'].join('\n'));
    assertScope(plain[1], 'Then not a step', 'string.unquoted.doc-string.gherkin');
    assertNoScope(plain[1], 'Then not a step', 'keyword');
  });

  it('does not take a step ending in a colon for a block header', () => {
    const lines = tokenize('    When I add the note:');
    assertScope(lines[0], 'When', 'keyword.control.step.gherkin');
    assertNoScope(lines[0], 'I add the note', 'keyword');
  });
});

describe('block headers in the other Gherkin languages', () => {
  it('highlights the block keyword of every language (up to four words) through the fallback', () => {
    const languages = JSON.parse(
      fs.readFileSync(path.join(repositoryRoot, 'crates/saffron-syntax/data/gherkin-languages.json'), 'utf8'),
    ) as Record<string, Record<string, unknown>>;
    const kinds = ['feature', 'background', 'scenario', 'scenarioOutline', 'examples', 'rule'];
    let checked = 0;
    const missed: string[] = [];
    for (const [code, language] of Object.entries(languages)) {
      for (const kind of kinds) {
        for (const keyword of language[kind] as string[]) {
          if (keyword.split(' ').length > 4 || !/^[\p{L}\p{M}][\p{L}\p{M}\p{N}'’ -]*$/u.test(keyword)) {
            continue; // emoji keywords and the long joke ones of en-old, en-tx, ...
          }
          checked += 1;
          const line = tokenize(`  ${keyword}: A title`)[0] ?? [];
          if (!tokensOf(line, keyword).every((token) => token.scopes.includes('keyword.control.block.gherkin'))) {
            missed.push(`${code}: ${keyword}`);
          }
        }
      }
    }
    assert.ok(checked > 500, `checked ${checked} keywords`);
    assert.deepEqual(missed, []);
  });
});
