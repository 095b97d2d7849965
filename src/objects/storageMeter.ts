/**
 * Cloudflare's meter for the actors of this isolate, as the runtime itself
 * counts it: the rows each SQL cursor read and wrote (`cursor.rowsRead`,
 * `cursor.rowsWritten`: index rows included, which is what the bill counts),
 * the alarms set (each a written row on the bill) and the alarms that ran.
 * The SQL of the workflow actors (run actors, run index, flow keys) goes
 * through `durableObjectSql` and their alarms through {@link setAlarmMetered};
 * the rate counter and the chat gateway relay use their storage directly and
 * are not counted yet. `npm run bench` reads it
 * (section M, through the bench project's routes); it costs a few additions
 * per statement.
 */
export interface StorageMeterReading {
  rowsRead: number;
  rowsWritten: number;
  alarmsSet: number;
  alarmRuns: number;
  statements: number;
}

const reading: StorageMeterReading = { rowsRead: 0, rowsWritten: 0, alarmsSet: 0, alarmRuns: 0, statements: 0 };

/** Adds what one SQL cursor read and wrote (once it is consumed). */
export function meterCursor(cursor: { rowsRead: number; rowsWritten: number }): void {
  reading.rowsRead += cursor.rowsRead;
  reading.rowsWritten += cursor.rowsWritten;
  reading.statements++;
}

/** Sets the actor's alarm, counted as Cloudflare bills it. */
export function setAlarmMetered(storage: DurableObjectStorage, at: number): Promise<void> {
  reading.alarmsSet++;
  return storage.setAlarm(at);
}

/** An actor's `alarm()` began. */
export function meterAlarmRun(): void {
  reading.alarmRuns++;
}

export function readStorageMeter(): StorageMeterReading {
  return { ...reading };
}

export function resetStorageMeter(): void {
  reading.rowsRead = 0;
  reading.rowsWritten = 0;
  reading.alarmsSet = 0;
  reading.alarmRuns = 0;
  reading.statements = 0;
}
