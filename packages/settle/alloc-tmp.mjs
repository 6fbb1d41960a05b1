import { spawn } from 'node:child_process';
const { capture } = await import('@runplan/settle');
const mode = process.argv[2]; const n = 1000;
function raw(){return new Promise((res)=>{const c=spawn('/bin/true',[],{stdio:['ignore','pipe','pipe'],detached:true});c.stdout.on('data',()=>{});c.stderr.on('data',()=>{});c.on('close',res);});}
const f = mode==='raw'? raw : ()=>capture({argv:['/bin/true']});
for (let i=0;i<50;i++) await f();
console.log('START');
for (let i=0;i<n;i++) await f();
console.log('END');
