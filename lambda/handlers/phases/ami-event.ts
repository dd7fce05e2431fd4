// Phase: the AMI event's parsing (zod) and matching, loaded on the first event.
export { handleAmiEvent } from '../../app/handle-ami-event.js';
export { imageMatchesTerm } from '../../core/ami/queries.js';
