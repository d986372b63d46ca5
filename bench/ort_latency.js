// Times a model on ONNX Runtime (npm onnxruntime-node, CPU) with random inputs of the
// model's declared shapes (dynamic dims = 1). Prints "ort_ms_median N" for bench scripts.
//   node bench/ort_latency.js MODEL [ITERATIONS] [THREADS]
const ort = require('onnxruntime-node');

async function main() {
  const [model, iterations = '5', threads = '2'] = process.argv.slice(2);
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: Number(threads), interOpNumThreads: 1, graphOptimizationLevel: 'all'});
  const feeds = {};
  for (const name of session.inputNames) {
    const meta = session.inputMetadata ? session.inputMetadata.find?.((m) => m.name === name) : undefined;
    const dims = meta && meta.shape ? meta.shape.map((d) => (typeof d === 'number' && d > 0 ? d : 1)) : null;
    if (!dims) throw new Error(`cannot read the shape of input ${name}; give a model with static input shapes`);
    const n = dims.reduce((a, b) => a * b, 1);
    const data = new Float32Array(n);
    for (let i = 0; i < n; ++i) data[i] = Math.random();
    feeds[name] = new ort.Tensor('float32', data, dims);
  }
  await session.run(feeds);  // warm-up
  const times = [];
  for (let i = 0; i < Number(iterations); ++i) {
    const t0 = process.hrtime.bigint();
    await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  times.sort((a, b) => a - b);
  console.log(`ort_ms_median ${times[Math.floor(times.length / 2)].toFixed(2)}`);
}
main().catch((e) => { console.error(e.message); process.exit(1); });
