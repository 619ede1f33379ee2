// Validates Kubernetes objects offline against the API's schemas, with the npm
// package kubernetes-models (no cluster): reads a JSON array of objects and
// prints one line per object, "ok KIND NAME" or "invalid KIND NAME: why".
//   node validate.mjs NODE_MODULES OBJECTS.json
// Exit 0 when every object is valid, 1 otherwise, 2 on bad input. The package
// is ESM with an exports map, so its files are imported by path.
import { readFileSync } from "node:fs";

const [modules, file] = process.argv.slice(2);
if (!modules || !file) {
  console.error("usage: node validate.mjs NODE_MODULES OBJECTS.json");
  process.exit(2);
}
const base = `${modules}/kubernetes-models`;
// apiVersion -> the package's folder of that group and version.
const folder = (apiVersion) => (apiVersion.includes("/") ? apiVersion : `v1`);
let bad = 0;
for (const obj of JSON.parse(readFileSync(file, "utf8"))) {
  const what = `${obj.kind} ${obj.metadata?.name ?? "?"}`;
  let models;
  try {
    models = await import(`${base}/${folder(obj.apiVersion)}/index.js`);
  } catch (e) {
    console.log(`invalid ${what}: no schema for apiVersion ${obj.apiVersion}`);
    bad++;
    continue;
  }
  const Model = models[obj.kind];
  if (!Model) {
    console.log(`invalid ${what}: ${obj.apiVersion} has no kind ${obj.kind}`);
    bad++;
    continue;
  }
  try {
    new Model(obj).validate();
    console.log(`ok ${what}`);
  } catch (e) {
    console.log(`invalid ${what}: ${e.message}`);
    bad++;
  }
}
process.exit(bad ? 1 : 0);
