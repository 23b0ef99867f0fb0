import { describeJournal } from '../../test/journal-suite.js';
import { MemoryJournal } from './memory.js';

describeJournal('MemoryJournal', { open: async (setup) => new MemoryJournal(setup) });
