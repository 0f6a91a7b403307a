// No text reaches the page as HTML (issue 42): user and device text (a device's
// FriendlyName, a geofence's name, an MO message's text, …) is put in the DOM only as
// text. Leaflet writes a *string* tooltip, popup or DivIcon `html` with innerHTML, so
// those take elements (built with `h`, whose strings become text nodes), never strings.
// This reads every source under src/ with the type checker and refuses:
//  - the HTML sinks: innerHTML, outerHTML, insertAdjacentHTML, document.write(ln),
//    createContextualFragment, DOMParser, setHTMLUnsafe, srcdoc, an `on…` attribute set
//    from code;
//  - a string (or a function answering one, or `any`) given to Leaflet's bindTooltip,
//    bindPopup, setTooltipContent, setPopupContent, setContent, as a tooltip's or popup's
//    `content`, or as a DivIcon's `html`;
//  - an attribution (also written as HTML) that is not a literal.
import { describe, expect, it } from 'vitest';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

const SINKS = new Set([
  'innerHTML',
  'outerHTML',
  'insertAdjacentHTML',
  'createContextualFragment',
  'setHTMLUnsafe',
  'parseHTMLUnsafe',
  'srcdoc',
  'DOMParser',
]);
const CONTENT_METHODS = new Set(['bindTooltip', 'bindPopup', 'setTooltipContent', 'setPopupContent', 'setContent']);
/** Leaflet factories whose options hold content written as HTML when a string. */
const CONTENT_OPTIONS: Record<string, string> = { tooltip: 'content', popup: 'content', Tooltip: 'content', Popup: 'content', divIcon: 'html', DivIcon: 'html' };
const LITERAL_ONLY_METHODS = new Set(['addAttribution', 'setPrefix']);

/** Every way `program`'s sources under `under` could write text as HTML, as `file:line: what`. */
function htmlSinks(program: ts.Program, under: string): string[] {
  const checker = program.getTypeChecker();
  const found: string[] = [];
  const stringy = (type: ts.Type): boolean => {
    if (type.flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown | ts.TypeFlags.StringLike)) return true;
    if (type.isUnion() || type.isIntersection()) return type.types.some(stringy);
    // A function (Leaflet's `(layer) => content`): what it answers.
    return type.getCallSignatures().some((s) => stringy(s.getReturnType()));
  };
  const calleeName = (e: ts.Expression): string | undefined =>
    ts.isPropertyAccessExpression(e) ? e.name.text : ts.isIdentifier(e) ? e.text : undefined;
  for (const file of program.getSourceFiles()) {
    if (!resolve(file.fileName).startsWith(under)) continue;
    const at = (node: ts.Node, what: string): void => {
      const { line } = file.getLineAndCharacterOfPosition(node.getStart(file));
      found.push(`${file.fileName.slice(root.length + 1)}:${line + 1}: ${what}`);
    };
    const visit = (node: ts.Node): void => {
      if (ts.isIdentifier(node) && SINKS.has(node.text)) at(node, node.text);
      if ((ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) && SINKS.has(node.text)) at(node, `'${node.text}'`);
      if (ts.isPropertyAccessExpression(node) && /^(write|writeln)$/.test(node.name.text) && node.expression.getText(file) === 'document') {
        at(node, `document.${node.name.text}`);
      }
      if (ts.isCallExpression(node)) {
        const name = calleeName(node.expression);
        const [first] = node.arguments;
        // `h` (src/dom.ts) names attributes from its callers' literals and refuses these itself.
        const named = (first && ts.isStringLiteral(first)) || file.fileName.endsWith('src/dom.ts');
        if (name === 'setAttribute' && first && (!named || (ts.isStringLiteral(first) && (/^on/i.test(first.text) || first.text === 'srcdoc')))) {
          at(node, `setAttribute(${first.getText(file)}, …): an attribute named by a literal, never an event handler`);
        }
        if (name && CONTENT_METHODS.has(name) && first && stringy(checker.getTypeAtLocation(first))) {
          at(node, `${name} given a string (${checker.typeToString(checker.getTypeAtLocation(first))}): Leaflet writes it as HTML; give it an element`);
        }
        if (name && LITERAL_ONLY_METHODS.has(name) && first && !(ts.isStringLiteral(first) || first.kind === ts.SyntaxKind.FalseKeyword)) {
          at(node, `${name} given something other than a literal: written as HTML`);
        }
      }
      if (ts.isCallExpression(node) || ts.isNewExpression(node)) {
        const name = calleeName(node.expression);
        const option = name ? CONTENT_OPTIONS[name] : undefined;
        for (const arg of node.arguments ?? []) {
          if (!option || !ts.isObjectLiteralExpression(arg)) continue;
          for (const p of arg.properties) {
            if (p.name && ts.isIdentifier(p.name) && p.name.text === option && stringy(checker.getTypeAtLocation(p))) {
              at(p, `${name}({ ${option}: string }): written as HTML; give it an element`);
            }
          }
        }
      }
      // Leaflet writes a layer's attribution into the attribution control as HTML.
      if (ts.isPropertyAssignment(node) && ts.isIdentifier(node.name) && node.name.text === 'attribution' && !ts.isStringLiteral(node.initializer)) {
        at(node, 'attribution from something other than a literal: written as HTML');
      }
      ts.forEachChild(node, visit);
    };
    visit(file);
  }
  return found;
}

/** The console's sources, type-checked as `tsc` does, and (for the self-test) `extra` files. */
function program(extra: Record<string, string> = {}): ts.Program {
  const configPath = join(root, 'tsconfig.json');
  const config = ts.getParsedCommandLineOfConfigFile(configPath, {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    },
  });
  if (!config) throw new Error('tsconfig.json unreadable');
  const host = ts.createCompilerHost(config.options);
  const virtual = new Map(Object.entries(extra).map(([name, text]) => [join(root, name), text]));
  const { getSourceFile, fileExists, readFile } = host;
  host.fileExists = (f) => virtual.has(resolve(f)) || fileExists.call(host, f);
  host.readFile = (f) => virtual.get(resolve(f)) ?? readFile.call(host, f);
  host.getSourceFile = (f, language, ...rest) => {
    const text = virtual.get(resolve(f));
    return text !== undefined ? ts.createSourceFile(f, text, language) : getSourceFile.call(host, f, language, ...rest);
  };
  const files = config.fileNames.filter((f) => resolve(f).startsWith(join(root, 'src'))).concat([...virtual.keys()]);
  return ts.createProgram(files, config.options, host);
}

describe('no text reaches the DOM as HTML', () => {
  it('no source under src/ writes HTML or gives Leaflet a string to write as HTML', () => {
    expect(htmlSinks(program(), join(root, 'src'))).toEqual([]);
  }, 60_000);

  it('the check finds each kind of sink (it is not vacuous)', () => {
    // Each line marked `// HTML` must be found, and no other.
    const fixture = `
      import L from 'leaflet';
      import { h } from './dom';
      declare const name: string;
      declare const el: HTMLElement;
      declare const marker: L.CircleMarker;
      export function unsafe(): void {
        el.innerHTML = name; // HTML
        el.outerHTML = name; // HTML
        el.insertAdjacentHTML('beforeend', name); // HTML
        (el as unknown as Record<string, string>)['innerHTML'] = name; // HTML
        document.write(name); // HTML
        el.setAttribute('onclick', name); // HTML
        marker.bindTooltip(name); // HTML
        marker.bindTooltip(() => name); // HTML
        marker.bindPopup(\`<b>\${name}</b>\`); // HTML
        marker.setTooltipContent(name); // HTML
        L.divIcon({ html: name }); // HTML
        L.tooltip({ content: name }); // HTML
        L.geoJSON(undefined, { attribution: name }); // HTML
      }
      export function safe(): void {
        el.textContent = name;
        marker.bindTooltip(h('span', {}, name));
        marker.bindTooltip(() => h('span', {}, name), { sticky: true });
        marker.setTooltipContent(h('span', {}, name));
        L.divIcon({ html: h('div', {}, name) });
        el.setAttribute('aria-label', name);
        L.geoJSON(undefined, { attribution: 'Natural Earth' });
      }
    `;
    const name = 'src/__unsafe_fixture__.ts';
    const found = htmlSinks(program({ [name]: fixture }), join(root, name));
    const marked = fixture.split('\n').flatMap((l, i) => (l.endsWith('// HTML') ? [i + 1] : []));
    expect(marked.length).toBe(13);
    expect([...new Set(found.map((f) => Number(f.split(':')[1])))].sort((a, b) => a - b), found.join('\n')).toEqual(marked);
  }, 60_000);
});
