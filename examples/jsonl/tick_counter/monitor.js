// A jsonl/1 monitor in Node.js: no SDK, only the standard library's readline and JSON.
// The runtime writes {"start": …} first, then {"event": {"type", "source", "time", "payload"}}
// for each event this process subscribed to, and {"stop": true} before it ends us.
const readline = require("readline");

const send = (frame) => process.stdout.write(JSON.stringify(frame) + "\n");
let every = 3;
let count = 0;

readline.createInterface({ input: process.stdin }).on("line", (line) => {
  let frame;
  try {
    frame = JSON.parse(line);
  } catch (error) {
    console.error(`ignored a line that is not JSON: ${error.message}`);
    return;
  }
  if (frame.start) {
    every = frame.start.settings.every ?? every;
    send({ ready: true });
  } else if (frame.event) {
    count += 1;
    if (count % every === 0) {
      send({ alert: { text: `${count} ticks from ${frame.event.source}, the last n=${frame.event.payload.n}` } });
    }
    send({ heartbeat: true });
  } else if (frame.stop) {
    process.exit(0);
  }
}).on("close", () => process.exit(0));
