// Typed views of an engine's linear memory. Memory growth detaches the old ArrayBuffer, so
// views are re-made whenever the buffer has changed since they were taken.

export class MemoryViews {
  private buffer: ArrayBuffer | null = null;
  private f32View = new Float32Array(0);
  private u32View = new Uint32Array(0);
  private u8View = new Uint8Array(0);

  constructor(private readonly memory: WebAssembly.Memory) {}

  private refresh(): void {
    if (this.buffer === this.memory.buffer) return;
    this.buffer = this.memory.buffer;
    this.f32View = new Float32Array(this.buffer);
    this.u32View = new Uint32Array(this.buffer);
    this.u8View = new Uint8Array(this.buffer);
  }

  get f32(): Float32Array { this.refresh(); return this.f32View; }
  get u32(): Uint32Array { this.refresh(); return this.u32View; }
  get u8(): Uint8Array { this.refresh(); return this.u8View; }
}
