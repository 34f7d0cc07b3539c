import { describe, expect, it } from 'vitest';
import { compileTerm, compileTerms, findTerms } from '../../src/questions/terms.js';

const found = (term: string, text: string) => findTerms(text, [compileTerm(term, 'test')]).map((h) => h.found);

describe('term matching', () => {
  it('is case-insensitive and matches whole words only', () => {
    expect(found('tile', 'Would a TILE help?')).toEqual(['TILE']);
    expect(found('tile', 'Is the design versatile?')).toEqual([]);
    expect(found('tile', 'Are tiles the answer?')).toEqual(['tiles']);
    expect(found('L2', 'What does the L2 hold?')).toEqual(['L2']);
    expect(found('L2', 'Is L20 a scenario?')).toEqual([]);
    expect(found('SM', 'How many SMs are busy?')).toEqual(['SMs']);
    expect(found('SM', 'Is it a small change?')).toEqual([]);
  });

  it('lets a space or hyphen in a term match either', () => {
    expect(found('shared memory', 'What about shared-memory?')).toEqual(['shared-memory']);
    expect(found('split-k', 'Would split k help?')).toEqual(['split k']);
    expect(found('shared memory', 'What about shared\nmemory?')).toEqual(['shared\nmemory']);
  });

  it('matches any continuation of a word ending in *', () => {
    expect(found('vectori*', 'Vectorised loads?')).toEqual(['Vectorised']);
    expect(found('vectori*', 'What about vectorization?')).toEqual(['vectorization']);
    expect(found('vectori*', 'Is it a vector?')).toEqual([]);
    expect(found('async*', 'What runs asynchronously?')).toEqual(['asynchronously']);
  });

  it('handles terms that begin or end with punctuation', () => {
    expect(found('cp.async', 'Use cp.async?')).toEqual(['cp.async']);
    expect(found('cp.async', 'Is cpXasync a word?')).toEqual([]);
    expect(found('__syncthreads', 'Is __syncthreads() needed?')).toEqual(['__syncthreads']);
    expect(found('__syncthreads', 'Is x__syncthreads needed?')).toEqual([]);
  });

  it('reports every listed term with its category', () => {
    const matchers = compileTerms({ memory: ['register*'], libraries: ['cuBLAS', 'BLAS'] });
    expect(findTerms('Could cuBLAS use fewer registers?', matchers)).toEqual([
      { term: 'register*', category: 'memory', found: 'registers' },
      { term: 'cuBLAS', category: 'libraries', found: 'cuBLAS' },
    ]);
  });

  it('refuses a term with no letters or digits', () => {
    expect(() => compileTerm('--', 'x')).toThrow(/no letters or digits/);
  });
});
