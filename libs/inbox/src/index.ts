export * from './elicitation-form.js';
export * from './inbox-item.js';
export * from './inbox.js';
export * from './approvers.js';
