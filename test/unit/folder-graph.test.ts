/**
 * The folders of src/core form a layered graph: no folder imports (even a type) from a
 * folder that imports it back, directly or through others. A cycle is how "one concern
 * per folder" decays, so this test computes the graph from the import
 * statements themselves (static, type-only, re-exports and dynamic `import()`), and on a
 * cycle prints the folders and the file-level edges that close it. Files at the root of
 * src/core (context, errors, paths, log, clock, spawn, version) are the shared base and
 * are left out: every folder may use them, and they import no folder but through types.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

const CORE = resolve(import.meta.dirname, '../../src/core');
const IMPORT_RE = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])(\.{1,2}\/[^'"]+)\1/g;

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return tsFiles(p);
    return e.name.endsWith('.ts') ? [p] : [];
  });
}

/** The top-level folder of src/core a file lives in, or undefined for a root file. */
function folderOf(file: string): string | undefined {
  const parts = relative(CORE, file).split(sep);
  return parts.length > 1 && !parts[0]!.startsWith('..') ? parts[0] : undefined;
}

interface Edge {
  from: string;
  to: string;
  file: string;
  target: string;
}

function folderEdges(): Edge[] {
  const edges: Edge[] = [];
  for (const file of tsFiles(CORE)) {
    const from = folderOf(file);
    if (from === undefined) continue;
    for (const m of readFileSync(file, 'utf8').matchAll(IMPORT_RE)) {
      const target = resolve(dirname(file), m[2]!);
      const to = folderOf(target);
      if (to !== undefined && to !== from) {
        edges.push({ from, to, file: relative(CORE, file), target: relative(CORE, target) });
      }
    }
  }
  return edges;
}

/** Strongly connected components with more than one folder (Tarjan). */
function folderCycles(edges: Edge[]): string[][] {
  const graph = new Map<string, Set<string>>();
  for (const e of edges) {
    if (!graph.has(e.from)) graph.set(e.from, new Set());
    if (!graph.has(e.to)) graph.set(e.to, new Set());
    graph.get(e.from)!.add(e.to);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('src/core folder graph', () => {
  it('finds the imports it judges (a sanity check that the scan sees type and dynamic imports)', () => {
    const edges = folderEdges();
    expect(edges.length).toBeGreaterThan(50);
    expect(edges.some((e) => e.from === 'operations' && e.to === 'store')).toBe(true);
  });

  it('detects a cycle when one exists (the detector itself can fail)', () => {
    const cycles = folderCycles([
      { from: 'a', to: 'b', file: 'a/x.ts', target: 'b/y.ts' },
      { from: 'b', to: 'c', file: 'b/y.ts', target: 'c/z.ts' },
      { from: 'c', to: 'a', file: 'c/z.ts', target: 'a/x.ts' },
      { from: 'c', to: 'd', file: 'c/z.ts', target: 'd/w.ts' },
    ]);
    expect(cycles).toEqual([['a', 'b', 'c']]);
  });

  it('has no cycle between folders, type-only and dynamic imports included', () => {
    const edges = folderEdges();
    const report = folderCycles(edges).map((cycle) => {
      const inside = edges.filter((e) => cycle.includes(e.from) && cycle.includes(e.to));
      return `cycle through ${cycle.join(', ')}:\n${inside.map((e) => `  ${e.file} -> ${e.target}`).join('\n')}`;
    });
    expect(report.join('\n'), 'move the shared piece down into the lower folder (docs/architecture.md, "Layers")').toBe('');
  });
});
