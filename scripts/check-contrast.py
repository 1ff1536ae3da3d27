#!/usr/bin/env python3
"""WCAG contrast of the HTML report's palette (light and dark): text >= 4.5:1 on its
backgrounds, chart marks >= 3:1 on the chart and lane backgrounds. Reads the CSS variables
from Sources/CastscopeKit/Reports/HTMLAssets.swift (argument); exits 1 when a pair fails."""
import re,sys
css=open(sys.argv[1]).read()
def vars_(t):
    out={}
    for k,v in re.findall(r'--([a-z-]+):(#[0-9a-f]{3,6})\b', t):
        if len(v)==4: v='#'+''.join(ch*2 for ch in v[1:])
        out[k]=v
    return out
head,rest=css.split('@media (prefers-color-scheme:dark)')
light=vars_(head); dark=dict(light); dark.update(vars_(rest.split('}}')[0]))
def lum(h):
    c=[int(h[i:i+2],16)/255 for i in (1,3,5)]
    c=[x/12.92 if x<=0.03928 else ((x+0.055)/1.055)**2.4 for x in c]
    return 0.2126*c[0]+0.7152*c[1]+0.0722*c[2]
def cr(a,b):
    la,lb=lum(a),lum(b); return (max(la,lb)+0.05)/(min(la,lb)+0.05)
ok=True
for name,p in (('light',light),('dark',dark)):
    rows=[]
    for t in ['fg','muted','sev-error','sev-warning','sev-info','c-conn']:
        for bg in ['bg','panel']: rows.append((t,bg,cr(p[t],p[bg]),4.5))
    for o in ['o-completed','o-stopped','o-failed','o-other']: rows.append(('white',o,cr('#ffffff',p[o]),4.5))
    for m in ['connecting','streaming','ok','failtick','fps','c-fail','c-conn','c-life','c-frames','c-other','sev-error','sev-warning','sev-info']:
        for bg in ['chart','l-extension','l-app','l-relay','l-system']: rows.append((m,bg,cr(p[m],p[bg]),3))
    bad=[r for r in rows if r[2]<r[3]]
    ok = ok and not bad
    print(name, 'min text %.2f'%min(r[2] for r in rows if r[3]==4.5), 'min marks %.2f'%min(r[2] for r in rows if r[3]==3), 'failing:', [(a,b,round(c,2)) for a,b,c,_ in bad])
sys.exit(0 if ok else 1)
