// The fields of a form elicitation, built from the upstream's requestedSchema (the MCP
// spec's restricted subset: a flat object of strings, numbers, integers, booleans, single-
// and multi-choice enums). Each field reads its value and says what is wrong with it: the
// browser's constraint validation, plus what HTML cannot express (a default shorter than
// minLength, how many choices). The daemon checks the answer again.
import { el, uid, choicesOf, isUrl, toLocalDateTime } from './dom.js';

/** One property of a form: its markup, how to read its value, and what is wrong with it. */
export function renderField(name, property, isRequired) {
  const p = property && typeof property === 'object' ? property : {};
  const id = uid('field');
  const errorId = `${id}-error`;
  const helpId = `${id}-help`;
  const help = typeof p.description === 'string' && p.description ? el('p', { class: 'help', id: helpId, text: p.description }) : '';
  const error = el('p', { class: 'field-error', id: errorId });
  const describedBy = [help ? helpId : null, errorId].filter(Boolean).join(' ');
  const labelText = typeof p.title === 'string' && p.title ? p.title : name;
  const label = (forId) => el('label', { for: forId }, labelText, isRequired ? el('span', { class: 'required', 'aria-hidden': 'true', text: ' *' }) : null);
  const node = el('div', { class: 'field', 'data-field': name });
  const field = { name, node, controls: [], read: () => undefined, check: () => undefined, showProblem: () => undefined };
  field.showProblem = (problem) => {
    error.textContent = problem || '';
    for (const control of field.controls) control.setAttribute('aria-invalid', problem ? 'true' : 'false');
  };

  const choices = choicesOf(p);
  if (p.type === 'array') {
    const options = choicesOf(p.items && typeof p.items === 'object' ? p.items : {}) || [];
    const defaults = new Set(Array.isArray(p.default) ? p.default : []);
    const legend = el('legend', {}, labelText, isRequired ? el('span', { class: 'required', 'aria-hidden': 'true', text: ' *' }) : null);
    const set = el('fieldset', { class: 'choices', 'aria-describedby': describedBy }, legend);
    const boxes = options.map((option) => {
      const boxId = uid('choice');
      const box = el('input', { type: 'checkbox', id: boxId, value: option.value, checked: defaults.has(option.value) });
      set.append(el('div', { class: 'choice' }, box, el('label', { for: boxId, text: option.label })));
      return box;
    });
    field.controls.push(...boxes);
    node.append(set, help, error);
    const picked = () => boxes.filter((box) => box.checked).map((box) => box.value);
    field.read = () => (picked().length > 0 || isRequired ? picked() : undefined);
    field.check = () => {
      const count = picked().length;
      if (count === 0 && !isRequired) return undefined;
      if (typeof p.minItems === 'number' && count < p.minItems) return `Choose at least ${p.minItems}.`;
      if (typeof p.maxItems === 'number' && count > p.maxItems) return `Choose at most ${p.maxItems}.`;
      return undefined;
    };
    return field;
  }

  if (p.type === 'string' && choices) {
    const select = el('select', { id, required: isRequired, 'aria-describedby': describedBy });
    const hasDefault = typeof p.default === 'string' && choices.some((c) => c.value === p.default);
    if (!hasDefault) select.append(el('option', { value: '', text: isRequired ? 'Choose…' : '(no answer)' }));
    for (const choice of choices) select.append(el('option', { value: choice.value, text: choice.label, selected: hasDefault && choice.value === p.default }));
    field.controls.push(select);
    node.append(label(id), select, help, error);
    field.read = () => (select.value === '' ? undefined : select.value);
    field.check = () => (select.checkValidity() ? undefined : select.validationMessage || 'Choose one.');
    return field;
  }

  if (p.type === 'boolean') {
    const box = el('input', { type: 'checkbox', id, checked: p.default === true, 'aria-describedby': describedBy });
    field.controls.push(box);
    node.classList.add('field-boolean');
    node.append(el('div', { class: 'choice' }, box, label(id)), help, error);
    field.read = () => box.checked;
    return field;
  }

  if (p.type === 'number' || p.type === 'integer') {
    const input = el('input', {
      type: 'number',
      id,
      required: isRequired,
      min: typeof p.minimum === 'number' ? p.minimum : undefined,
      max: typeof p.maximum === 'number' ? p.maximum : undefined,
      step: p.type === 'integer' ? '1' : 'any',
      inputmode: p.type === 'integer' ? 'numeric' : 'decimal',
      'aria-describedby': describedBy,
    });
    if (typeof p.default === 'number') input.value = String(p.default);
    field.controls.push(input);
    node.append(label(id), input, help, error);
    field.read = () => (input.value === '' ? undefined : Number(input.value));
    field.check = () => {
      if (!input.checkValidity()) return input.validationMessage;
      if (input.value === '') return undefined;
      const value = Number(input.value);
      if (p.type === 'integer' && !Number.isInteger(value)) return 'Enter a whole number.';
      if (typeof p.minimum === 'number' && value < p.minimum) return `Enter at least ${p.minimum}.`;
      if (typeof p.maximum === 'number' && value > p.maximum) return `Enter at most ${p.maximum}.`;
      return undefined;
    };
    return field;
  }

  if (p.type === 'string') {
    const type = { email: 'email', uri: 'url', date: 'date', 'date-time': 'datetime-local' }[p.format] || 'text';
    const pattern = compilePattern(p.pattern);
    const input = el('input', {
      type,
      id,
      required: isRequired,
      minlength: typeof p.minLength === 'number' ? p.minLength : undefined,
      maxlength: typeof p.maxLength === 'number' ? p.maxLength : undefined,
      pattern: pattern ? htmlPattern(p.pattern) : undefined,
      autocomplete: 'off',
      'aria-describedby': describedBy,
    });
    if (typeof p.default === 'string') input.value = p.format === 'date-time' ? toLocalDateTime(p.default) : p.default;
    field.controls.push(input);
    node.append(label(id), input, help, error);
    field.read = () => {
      if (input.value === '') return undefined;
      // datetime-local has no zone: send the instant the user meant, in ISO 8601 with Z.
      return p.format === 'date-time' ? new Date(input.value).toISOString() : input.value;
    };
    field.check = () => {
      if (!input.checkValidity()) return input.validationMessage;
      const value = input.value;
      if (value === '') return undefined;
      // minlength only applies once the user has typed; a pre-filled default is checked here.
      if (typeof p.minLength === 'number' && value.length < p.minLength) return `Enter at least ${p.minLength} characters.`;
      if (typeof p.maxLength === 'number' && value.length > p.maxLength) return `Enter at most ${p.maxLength} characters.`;
      if (p.format === 'uri' && !isUrl(value)) return 'Enter a full address, such as https://example.com/.';
      if (p.format === 'date-time' && Number.isNaN(new Date(value).getTime())) return 'Enter a date and time.';
      // Also here: the browser compiles the attribute with the v flag, stricter than the schema's u.
      if (pattern && !pattern.test(value)) return 'Enter a value in the requested format.';
      return undefined;
    };
    return field;
  }

  node.append(el('p', { class: 'warning', text: `${labelText}: this page cannot show a field of this type; it is left out of the answer.` }));
  return field;
}

/** A schema's `pattern` (ECMAScript, u flag, unanchored), or null when there is none that compiles. */
function compilePattern(source) {
  if (typeof source !== 'string') return null;
  try {
    return new RegExp(source, 'u');
  } catch {
    return null;
  }
}

/**
 * The same pattern for an input's `pattern` attribute, which the browser anchors to the whole
 * value (`^(?:...)$`): a JSON Schema pattern matches anywhere unless it anchors itself.
 */
function htmlPattern(source) {
  return `[\\s\\S]*(?:${source})[\\s\\S]*`;
}
