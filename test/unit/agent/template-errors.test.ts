/**
 * Template errors: Go's message word for word (template-go.test.ts compares them with Go), and a
 * log form without values from the data, since a few of Go's messages quote a value (a secret).
 */
import { describe, expect, it } from 'vitest';
import { GoTemplate, TemplateError } from '../../../src/agent/template/exec.js';
import { consulTemplateFunctions } from '../../../src/agent/template/functions.js';

function failure(src: string, data: unknown): TemplateError {
  try {
    new GoTemplate('t.ctmpl', src, consulTemplateFunctions({})).execute(data);
  } catch (e) {
    return e as TemplateError;
  }
  throw new Error('no error');
}

describe('template errors', () => {
  it('range over a string: Go quotes the value; the log form names only its type', () => {
    const e = failure('line 1\n  {{ range .s }}{{ end }}', { s: 'hunter2' });
    expect(e).toBeInstanceOf(TemplateError);
    expect(e.message).toBe('template: t.ctmpl:2:11: executing "t.ctmpl" at <.s>: range can\'t iterate over hunter2');
    expect(e.logMessage).toBe(
      'template: t.ctmpl:2:11: executing "t.ctmpl" at <.s>: range can\'t iterate over a value of type string',
    );
    expect([e.templateName, e.line, e.column]).toEqual(['t.ctmpl', 2, 11]);
  });

  it('eq on maps and parseJSON of bad text keep the values out of the log form', () => {
    const eq = failure('{{ eq .m .m }}', { m: { password: 'hunter2' } });
    expect(eq.message).toContain('hunter2');
    expect(eq.logMessage).not.toContain('hunter2');
    const pj = failure('{{ .s | parseJSON }}', { s: '{hunter2' });
    expect(pj.logMessage).not.toContain('hunter2');
    expect(pj.logMessage).toMatch(/error calling parseJSON: parseJSON: not valid JSON$/);
  });

  it('a missing key names the key, not a value', () => {
    const e = new GoTemplate('t', '{{ .a.nope }}', {}, { errorOnMissingKey: true });
    expect(() => e.execute({ a: { secret: 'hunter2' } })).toThrow(
      'template: t:1:5: executing "t" at <.a.nope>: map has no entry for key "nope"',
    );
  });
});
