import { RE2JS } from 're2js';
const cases = [['^[A-Z]{3}$','EUR'],['^[A-Z0-9-]{3,32}$','SKU-12'],['^[A-Z]{2}$','DE']];
for (const [p,s] of cases) {
  const r = RE2JS.compile(p); const n = new RegExp(p,'u');
  const re2 = r.re2();
  for (const [name, f] of [['re2js.test', () => r.test(s)], ['re2.match?', () => re2.match ? re2.match(s) : r.test(s)], ['native', () => n.test(s)]]) {
    let k=0; const t0=process.cpuUsage(); for (let i=0;i<300000;i++) if (f()) k++; const u=process.cpuUsage(t0); console.log(p, name, ((u.user+u.system)/300000*1000).toFixed(0),'ns', k);
  }
}
console.log(Object.getOwnPropertyNames(Object.getPrototypeOf(RE2JS.compile('a').re2())).join(' '));
