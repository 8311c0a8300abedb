// Skymo's game sounds, made here (no sound file): a few notes each, at the volume the
// player chose. static/skymo-1.js loads this module the first time a sound is due,
// only once sound is turned on (the table page has a weight budget).
const SOUNDS = {
  turn: [[660, 880], 0.12], draw: [[392], 0.08], flip: [[523], 0.07],
  clear: [[523, 659, 784], 0.1], round: [[784, 659, 523, 392], 0.14],
};
let audio = null;

export function play(name, volume) {
  const [notes, step] = SOUNDS[name];
  try {
    audio = audio || new AudioContext();
    notes.forEach((f, i) => {
      const osc = audio.createOscillator();
      const gain = audio.createGain();
      const t = audio.currentTime + i * step;
      osc.frequency.value = f;
      gain.gain.setValueAtTime(0.25 * volume, t);
      gain.gain.exponentialRampToValueAtTime(0.001, t + step * 2);
      osc.connect(gain).connect(audio.destination);
      osc.start(t);
      osc.stop(t + step * 2);
    });
  } catch (e) { /* no audio here */ }
}
