// browser_start_recording / browser_stop_recording (OpenHands action kinds). OpenHands records rrweb
// events; here the recording is a Playwright trace of the whole browser (every tab): screenshots and
// DOM snapshots of each step, saved as a zip in the conversation's directory of the agent server's
// data, never in the working directory. The stop observation names the file and its directory.
import type { BrowserToolSpec } from './spec.ts';

export const RECORDING_SPECS = [
  {
    name: 'browser_start_recording',
    kind: 'BrowserStartRecordingAction',
    description:
      'Start recording the browser session: every page of every tab is captured (screenshots and DOM snapshots) until browser_stop_recording, which saves the recording to a file and returns its path. Starts the browser if needed.',
    toAction: () => ({ kind: 'BrowserStartRecordingAction' }),
    async run(_action, session) {
      await session.startRecording();
      return 'Recording started. Browse as usual; call browser_stop_recording to save the recording.';
    },
  } satisfies BrowserToolSpec<'BrowserStartRecordingAction'>,
  {
    name: 'browser_stop_recording',
    kind: 'BrowserStopRecordingAction',
    description: 'Stop the recording started by browser_start_recording and save it: returns the path of the saved recording (a Playwright trace zip, viewable in the Playwright trace viewer).',
    toAction: () => ({ kind: 'BrowserStopRecordingAction' }),
    async run(_action, session) {
      const saved = await session.stopRecording();
      return { text: `Recording stopped and saved to ${saved.path} (${saved.bytes} bytes, a Playwright trace: open it with the Playwright trace viewer).`, saveDir: saved.dir };
    },
  } satisfies BrowserToolSpec<'BrowserStopRecordingAction'>,
] as const;
