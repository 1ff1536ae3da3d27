/// The inline style, legend and script of the HTML report (see `HTMLReport`).
///
/// Colours meet WCAG AA: text ≥ 4.5:1 and chart marks ≥ 3:1 against their background, in the
/// light and the dark (`prefers-color-scheme`) palette.
enum HTMLAssets {
    static let css = """
        :root{--bg:#fff;--fg:#1d1f23;--muted:#5b6068;--line:#d9dce1;--panel:#f6f7f9;--chart:#fbfbfc;--grid:#e6e8eb;
        --connecting:#c77700;--streaming:#2e7d32;--ok:#1b5e20;--failtick:#c62828;--fps:#1565c0;
        --c-fail:#c62828;--c-conn:#1565c0;--c-life:#6a1b9a;--c-frames:#00796b;--c-other:#5b6068;
        --l-extension:#fdf3e3;--l-app:#eaf2fb;--l-relay:#eef7ee;--l-system:#f3eff8;
        --o-completed:#1b5e20;--o-stopped:#8a4b00;--o-failed:#b71c1c;--o-other:#6a1b9a;
        --sev-error:#b71c1c;--sev-warning:#8a4b00;--sev-info:#0d47a1;--focus:#1565c0}
        @media (prefers-color-scheme:dark){:root{--bg:#15171a;--fg:#e6e8eb;--muted:#a4a9b1;--line:#3a3e45;--panel:#1f2226;--chart:#1b1d21;--grid:#2e3238;
        --connecting:#e0962a;--streaming:#4caf50;--ok:#66bb6a;--failtick:#ff6b6b;--fps:#64b5f6;
        --c-fail:#ff6b6b;--c-conn:#64b5f6;--c-life:#ce93d8;--c-frames:#4db6ac;--c-other:#a4a9b1;
        --l-extension:#2a2418;--l-app:#1a2330;--l-relay:#1b271c;--l-system:#241d2c;
        --sev-error:#ff8a80;--sev-warning:#ffb74d;--sev-info:#90caf9;--focus:#90caf9}}
        *{box-sizing:border-box}
        body{font:14px/1.45 -apple-system,system-ui,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;margin:0 auto;max-width:1400px;padding:16px 20px;color:var(--fg);background:var(--bg);overflow-wrap:break-word}
        .msg,.src,code,dd{overflow-wrap:anywhere}
        h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:22px 0 6px}
        a{color:var(--c-conn)}:focus-visible{outline:2px solid var(--focus);outline-offset:2px}
        .muted{color:var(--muted)}.small{font-size:12px}.prov{margin:0 0 8px}
        .pill{display:inline-block;white-space:nowrap;padding:1px 8px;border-radius:10px;font-weight:600;font-size:12px;color:#fff;background:var(--o-other)}
        .o-completed{background:var(--o-completed)}.o-stopped-by-host,.o-interrupted{background:var(--o-stopped)}
        .o-failed-to-connect,.o-socket-error,.o-killed,.o-failed{background:var(--o-failed)}
        .sev-error{color:var(--sev-error)}.sev-warning{color:var(--sev-warning)}.sev-info{color:var(--sev-info)}
        table{border-collapse:collapse;margin:6px 0}td,th{border-bottom:1px solid var(--line);padding:3px 8px;text-align:left;vertical-align:top}
        .scroll{overflow-x:auto;max-width:100%}
        code,.mono,.src{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px}
        .src{color:var(--muted)}
        #tools{display:flex;flex-wrap:wrap;gap:6px 12px;align-items:end;position:sticky;top:0;z-index:2;background:var(--bg);padding:8px 0;border-bottom:1px solid var(--line)}
        #tools label{display:flex;flex-direction:column;font-size:12px;color:var(--muted)}
        #tools .grow{flex:1 1 180px}#tools input,#tools select{font:inherit;color:var(--fg);background:var(--panel);border:1px solid var(--line);border-radius:4px;padding:3px 4px;min-width:0}
        #f-count{font-size:12px;color:var(--muted)}
        .legend{display:flex;flex-wrap:wrap;gap:4px 14px;font-size:12px;margin:10px 0;padding:8px 10px;background:var(--panel);border-radius:6px}
        .legend span{display:inline-flex;align-items:center;gap:5px}.legend svg{flex:none}
        #ov svg,.chart svg{display:block;width:100%;background:var(--chart);border:1px solid var(--line);border-radius:4px;touch-action:pan-y}
        #ov rect.bar{cursor:pointer}#ov rect.dim{opacity:.15}
        .card{border-top:1px solid var(--line);margin-top:18px;padding-top:4px;scroll-margin-top:96px}
        .card.flash{animation:flash 1.2s ease-out}@keyframes flash{from{background:var(--panel)}to{background:transparent}}
        .card h2 .who{font-weight:400;color:var(--muted);font-size:14px}
        dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:6px 0}dl.facts dt{color:var(--muted)}dl.facts dd{margin:0}
        ul.decided{margin:0;padding-left:16px}
        .tlbar{display:flex;gap:6px;align-items:center;margin:6px 0 2px;flex-wrap:wrap}
        .tlbar button{font:inherit;min-width:32px;color:var(--fg);background:var(--panel);border:1px solid var(--line);border-radius:4px;padding:1px 8px;cursor:pointer}
        .chart{min-height:40px}.chart svg .mark{cursor:pointer}
        .detail{font-size:12px;min-height:1.5em;padding:3px 6px;background:var(--panel);border-radius:4px;margin:2px 0 6px}
        ul.findings{padding-left:18px}
        table.tl td.msg{min-width:16em}
        details summary{cursor:pointer}
        @media (max-width:640px){body{padding:10px}.wide{display:none}dl.facts{grid-template-columns:1fr}dl.facts dt{margin-top:4px}#tools{position:static}.card{scroll-margin-top:8px}table.sessions td:first-child{white-space:nowrap}
        table.tl td.msg{min-width:10em}}
        """

    static let legend = """
        <section class="legend" aria-label="legend">
        <span><svg width="22" height="10" aria-hidden="true"><rect width="22" height="10" fill="var(--connecting)"/></svg>connecting</span>
        <span><svg width="22" height="10" aria-hidden="true"><rect width="22" height="10" fill="var(--streaming)"/></svg>connected / streaming</span>
        <span><svg width="6" height="14" aria-hidden="true"><rect x="2" width="2" height="14" fill="var(--failtick)"/></svg>failed connect attempt</span>
        <span><svg width="6" height="14" aria-hidden="true"><rect x="2" width="2" height="14" fill="var(--ok)"/></svg>connect attempt</span>
        <span><svg width="10" height="10" aria-hidden="true"><circle cx="5" cy="5" r="4" fill="var(--c-fail)"/></svg>error, failure, kill</span>
        <span><svg width="10" height="10" aria-hidden="true"><circle cx="5" cy="5" r="4" fill="var(--c-conn)"/></svg>socket, server, relay</span>
        <span><svg width="10" height="10" aria-hidden="true"><circle cx="5" cy="5" r="4" fill="var(--c-life)"/></svg>broadcast lifecycle</span>
        <span><svg width="10" height="10" aria-hidden="true"><circle cx="5" cy="5" r="4" fill="var(--c-frames)"/></svg>frames</span>
        <span><svg width="10" height="10" aria-hidden="true"><circle cx="5" cy="5" r="4" fill="var(--c-other)"/></svg>other line</span>
        <span><svg width="14" height="14" aria-hidden="true"><circle cx="7" cy="7" r="5.5" fill="none" stroke="var(--fg)" stroke-width="2"/></svg>line that decided the outcome</span>
        <span><svg width="12" height="10" aria-hidden="true"><path d="M1 1h10l-5 8z" fill="var(--sev-error)"/></svg>error finding</span>
        <span><svg width="12" height="10" aria-hidden="true"><path d="M1 1h10l-5 8z" fill="var(--sev-warning)"/></svg>warning finding</span>
        <span><svg width="12" height="10" aria-hidden="true"><path d="M1 1h10l-5 8z" fill="var(--sev-info)"/></svg>info finding</span>
        <span><svg width="22" height="10" aria-hidden="true"><polyline points="0,8 7,3 14,6 22,2" fill="none" stroke="var(--fps)" stroke-width="2"/></svg>frames per second</span>
        <span>lanes: extension · host app · relay · system (×N = repeated lines folded into one mark)</span>
        </section>

        """

    static let script = #"""
        (function(){'use strict';
        var D=JSON.parse(document.getElementById('cs-data').textContent),S=D.sessions,NS='http://www.w3.org/2000/svg';
        var SIDES=[['extension','extension'],['app','host app'],['relay','relay'],['system','system']];
        var OC={'completed':'var(--o-completed)','stopped-by-host':'var(--o-stopped)','failed-to-connect':'var(--o-failed)','socket-error':'var(--o-failed)','killed':'var(--o-failed)','failed':'var(--o-failed)','interrupted':'var(--o-stopped)'};
        function el(t,a,p){var e=document.createElementNS(NS,t);for(var k in a)e.setAttribute(k,a[k]);if(p)p.appendChild(e);return e}
        function txt(t,a,s,p){var e=el('text',a,p);e.textContent=s;return e}
        var MS=1e3,SEC=1e6,MIN=60*SEC,HOUR=60*MIN,DAY=24*HOUR,YEAR=365*DAY;
        // Axis steps: a bounded set of round durations, so any span (a line dated 200 years
        // off included) gets at most ~target+1 ticks.
        var STEPS=[1,2,5,10,20,50,100,200,500].map(function(v){return v*MS}).concat([1,2,5,10,15,30].map(function(v){return v*SEC}),
          [1,2,5,10,15,30].map(function(v){return v*MIN}),[1,2,3,6,12].map(function(v){return v*HOUR}),[1,2,7,14,30,91,182].map(function(v){return v*DAY}));
        function niceStep(span,target){if(!(span>0)||!isFinite(span))return SEC;var raw=span/target;
          for(var i=0;i<STEPS.length;i++)if(STEPS[i]>=raw)return STEPS[i];
          var y=raw/YEAR,p=Math.pow(10,Math.floor(Math.log10(y))),m=[1,2,5,10];for(var j=0;j<4;j++)if(m[j]*p>=y)return m[j]*p*YEAR;return 10*p*YEAR}
        function ticks(a,b,target,origin){var st=niceStep(b-a,target),o=origin||0,out=[];
          for(var v=o+Math.ceil((a-o)/st)*st;v<=b&&out.length<=target+2;v+=st)out.push(v);return{step:st,values:out}}
        function rel(us,step){var a=Math.abs(us),s=us<0?'−':'+';
          if(step<SEC)return s+(a/SEC).toFixed(step<10*MS?3:step<100*MS?2:1)+' s';
          if(step<MIN)return s+Math.round(a/SEC)+' s';if(step<HOUR)return s+Math.round(a/MIN)+' min';
          if(step<DAY)return s+(a/HOUR).toFixed(a%HOUR?1:0)+' h';if(step<YEAR)return s+Math.round(a/DAY)+' d';return s+Math.round(a/YEAR)+' y'}
        function pad(n,w){n=String(n);while(n.length<w)n='0'+n;return n}
        function wall(us,off){if(us==null)return'';var d=new Date(Math.floor(us/1000)+off*1000);if(isNaN(d))return String(us);
          var o=Math.abs(off);return d.toISOString().slice(0,19)+'.'+pad(((us%1e6)+1e6)%1e6,6)+(off<0?'−':'+')+pad(Math.floor(o/3600),2)+':'+pad(Math.floor(o/60)%60,2)}
        function wallTick(us,off,step){var s=wall(us,off);return step>=DAY?s.slice(0,10):step>=MIN?s.slice(5,16).replace('T',' '):s.slice(11,19)}
        function dur(us){var a=Math.abs(us);return a<SEC?Math.round(a/MS)+' ms':a<MIN?(a/SEC).toFixed(1)+' s':a<HOUR?(a/MIN).toFixed(1)+' min':a<DAY?(a/HOUR).toFixed(1)+' h':(a/DAY).toFixed(1)+' d'}
        var cards=[].slice.call(document.querySelectorAll('.card')),byI={};cards.forEach(function(c){byI[c.dataset.i]=c});
        var rows={};[].forEach.call(document.querySelectorAll('table.sessions tr[data-i]'),function(r){rows[r.dataset.i]=r});
        // ---- per-session timelines, drawn when their card comes into view ----
        var view={},drawn={};
        function extent(s){var lo=s.s,hi=s.e==null?s.s:s.e;function see(t){if(t==null)return;if(t<lo)lo=t;if(t>hi)hi=t}
          s.ev.forEach(function(e){see(e[0])});s.a.forEach(function(e){see(e[0])});s.f.forEach(function(e){see(e[0])});s.fps.forEach(function(e){see(e[0])});
          if(hi-lo<SEC)hi=lo+SEC;var m=(hi-lo)*0.02;return[lo-m,hi+m]}
        function draw(i){var s=S[i],box=document.getElementById('tl-'+i);if(!box||s.s==null)return;drawn[i]=1;
          if(!view[i])view[i]=extent(s);var a=view[i][0],b=view[i][1];
          var W=Math.max(280,box.clientWidth||800),L=W<560?64:84,R=10,PW=W-L-R,lanes=SIDES.filter(function(sd){return sd[0]=='extension'||s.ev.some(function(e){return e[1]==sd[0]})});
          var top=34,LH=26,fpsH=s.fps.length?56:0,H=top+lanes.length*LH+fpsH+8,Y={};lanes.forEach(function(sd,k){Y[sd[0]]=top+k*LH+LH/2});
          function x(t){return L+PW*(t-a)/(b-a)}
          var svg=el('svg',{viewBox:'0 0 '+W+' '+H,width:W,height:H,role:'img','aria-label':'timeline of session '+s.id});
          var cid='clip-'+i,cp=el('clipPath',{id:cid},el('defs',{},svg));el('rect',{x:L,y:0,width:PW,height:H},cp);
          lanes.forEach(function(sd){el('rect',{x:L,y:Y[sd[0]]-LH/2+1,width:PW,height:LH-2,fill:'var(--l-'+sd[0]+')'},svg);
            txt('text',{x:4,y:Y[sd[0]]+4,'font-size':11,fill:'var(--fg)'},sd[1],svg)});
          var tk=ticks(a,b,Math.max(3,Math.min(8,Math.floor(PW/90))),s.s);
          tk.values.forEach(function(v){el('line',{x1:x(v),x2:x(v),y1:top-6,y2:H-4,stroke:'var(--grid)'},svg);
            txt('text',{x:Math.min(W-24,x(v)),y:12,'font-size':10,'text-anchor':'middle',fill:'var(--muted)'},rel(v-s.s,tk.step),svg)});
          var g=el('g',{'clip-path':'url(#'+cid+')'},svg),items=[];
          function mark(node,label,t,src){node.setAttribute('class','mark');node.setAttribute('tabindex','0');node.dataset.k=items.length;if(src)node.dataset.src=src;items.push([label,t,src])}
          var ey=Y.extension,end=s.e==null?b:Math.max(s.s,s.e),c=s.c==null?null:Math.max(s.s,s.c);
          mark(el('rect',{x:x(s.s),y:ey-7,width:Math.max(1,x(c==null?end:c)-x(s.s)),height:14,fill:'var(--connecting)'},g),'connecting'+(c==null?' (never connected)':' for '+dur(c-s.s)),s.s,'');
          if(c!=null)mark(el('rect',{x:x(c),y:ey-7,width:Math.max(1,x(end)-x(c)),height:14,fill:'var(--streaming)'},g),(s.str?'streaming':'connected')+' for '+dur(end-c),c,'');
          s.a.forEach(function(at){mark(el('rect',{x:x(at[0])-1,y:ey-11,width:2,height:22,fill:at[1]?'var(--failtick)':'var(--ok)'},g),at[2],at[0],at[3])});
          s.ev.forEach(function(e){if(e[1]=='extension'&&e[2]=='conn'&&/attempt|connect/.test(e[3])&&s.a.length)return;var y=Y[e[1]];if(y==null)return;
            mark(el('circle',{cx:x(e[0]),cy:y,r:e[5]>1?4.5:3.2,fill:'var(--c-'+e[2]+')',stroke:e[5]>1?'var(--bg)':'none'},g),e[3]+(e[5]>1?'':''),e[0],e[4])});
          s.d.forEach(function(e){var y=Y[e[1]];if(y==null)return;mark(el('circle',{cx:x(e[0]),cy:y,r:7,fill:'none',stroke:'var(--fg)','stroke-width':2},g),'decided the outcome: '+e[2],e[0],e[3])});
          if(s.fps.length){var fy=top+lanes.length*LH+6,fh=fpsH-14,mx=1;s.fps.forEach(function(p){if(p[1]>mx)mx=p[1]});
            el('line',{x1:L,x2:L+PW,y1:fy+fh,y2:fy+fh,stroke:'var(--grid)'},svg);el('line',{x1:L,x2:L+PW,y1:fy,y2:fy,stroke:'var(--grid)','stroke-dasharray':'3 3'},svg);
            txt('text',{x:4,y:fy+fh/2+4,'font-size':11,fill:'var(--fg)'},'fps ('+s.fpsSrc+')',svg);
            txt('text',{x:L-4,y:fy+4,'font-size':10,'text-anchor':'end',fill:'var(--muted)'},String(Math.round(mx)),svg);
            txt('text',{x:L-4,y:fy+fh+3,'font-size':10,'text-anchor':'end',fill:'var(--muted)'},'0',svg);
            var pts=s.fps.map(function(p){return x(p[0]).toFixed(1)+','+(fy+fh-fh*p[1]/mx).toFixed(1)}).join(' ');
            el('polyline',{points:pts,fill:'none',stroke:'var(--fps)','stroke-width':1.6},g);
            s.fps.forEach(function(p){mark(el('circle',{cx:x(p[0]),cy:fy+fh-fh*p[1]/mx,r:2.2,fill:'var(--fps)'},g),p[1]+' frames per second ('+s.fpsSrc+')',p[0],'')})}
          // Findings: triangles above the lanes, stacked when they would overlap.
          var lastX=[];s.f.slice().sort(function(p,q){return p[0]-q[0]}).forEach(function(f){var fx=x(f[0]),row=0;while(lastX[row]!=null&&fx-lastX[row]<11)row++;lastX[row]=fx;
            var fy=top-8-row*9;if(fy<14)fy=14;mark(el('path',{d:'M'+(fx-5).toFixed(1)+' '+(fy-7)+'h10l-5 8z',fill:'var(--sev-'+f[1]+')'},g),f[1]+': '+f[2]+' — '+f[3],f[0],f[4])});
          var det=document.getElementById('dt-'+i);
          function show(ev){var k=ev.target&&ev.target.dataset?ev.target.dataset.k:null;if(k==null)return;var it=items[k];
            det.textContent='';var b1=document.createElement('b');b1.textContent=wall(it[1],s.off)+' ('+rel(it[1]-s.s,1)+') ';det.appendChild(b1);
            det.appendChild(document.createTextNode(it[0]+' '));if(it[2]){var c1=document.createElement('code');c1.textContent=it[2];det.appendChild(c1)}}
          svg.addEventListener('pointerover',show);svg.addEventListener('click',show);svg.addEventListener('focusin',show);
          var drag=null;svg.addEventListener('pointerdown',function(e){if(e.target.dataset&&e.target.dataset.k!=null&&e.pointerType!='mouse')return;drag=[e.clientX,a,b];});
          svg.addEventListener('pointermove',function(e){if(!drag)return;var r=svg.getBoundingClientRect(),dt=(e.clientX-drag[0])/r.width*W/PW*(drag[2]-drag[1]);
            if(Math.abs(e.clientX-drag[0])<3)return;view[i]=[drag[1]-dt,drag[2]-dt];var d0=drag;draw(i);drag=d0});
          svg.addEventListener('pointerup',function(){drag=null});svg.addEventListener('pointerleave',function(){drag=null});
          svg.addEventListener('wheel',function(e){if(!e.ctrlKey&&!e.metaKey)return;e.preventDefault();var r=svg.getBoundingClientRect(),px=(e.clientX-r.left)/r.width*W;
            zoom(i,e.deltaY<0?0.8:1.25,a+(px-L)/PW*(b-a))},{passive:false});
          box.textContent='';box.appendChild(svg)}
        function zoom(i,f,at){var v=view[i],c=at==null?(v[0]+v[1])/2:at,w=Math.max(MS,(v[1]-v[0])*f);view[i]=[c-(c-v[0])*w/(v[1]-v[0]),c+(v[1]-c)*w/(v[1]-v[0])];draw(i)}
        cards.forEach(function(c){var i=c.dataset.i;[].forEach.call(c.querySelectorAll('.tlbar button'),function(bt){bt.addEventListener('click',function(){
          var z=bt.dataset.z;if(!view[i])return;if(z=='reset'){view[i]=null;draw(i)}else zoom(i,z=='in'?0.5:2)})})});
        var io='IntersectionObserver'in window?new IntersectionObserver(function(es){es.forEach(function(e){if(e.isIntersecting&&!drawn[e.target.dataset.i]){draw(e.target.dataset.i)}})},{rootMargin:'300px'}):null;
        cards.forEach(function(c){if(io)io.observe(c);else draw(c.dataset.i)});
        var rt;window.addEventListener('resize',function(){clearTimeout(rt);rt=setTimeout(function(){Object.keys(drawn).forEach(function(i){if(!byI[i].hidden)draw(i)});drawOverview()},150)});
        // ---- the bundle overview: every session as a bar on one time axis ----
        var bars={};
        function drawOverview(){var box=document.getElementById('ov');if(!box)return;var tm=S.map(function(s,i){var e=extent2(s);return{i:i,a:e[0],b:e[1]}}).filter(function(t){return t.a!=null});
          box.textContent='';if(!tm.length){box.textContent='(no times in these logs)';return}
          var lo=Math.min.apply(null,tm.map(function(t){return t.a})),hi=Math.max.apply(null,tm.map(function(t){return t.b}));if(hi-lo<SEC)hi=lo+SEC;
          var W=Math.max(280,box.clientWidth||800),L=8,R=8,PW=W-L-R,off=(S[tm[0].i]||{}).off||0;function x(t){return L+PW*(t-lo)/(hi-lo)}
          var ends=[];tm.sort(function(p,q){return p.a-q.a}).forEach(function(t){var r=0;while(ends[r]!=null&&x(t.a)<ends[r]+2)r++;t.r=r;ends[r]=Math.max(x(t.b),x(t.a)+3)});
          var RH=ends.length>40?4:ends.length>12?7:12,H=24+ends.length*RH+6;
          var svg=el('svg',{viewBox:'0 0 '+W+' '+H,width:W,height:H,role:'img','aria-label':'all sessions on one time axis'});
          var tk=ticks(lo,hi,Math.max(2,Math.min(8,Math.floor(PW/110))),0);
          tk.values.forEach(function(v){el('line',{x1:x(v),x2:x(v),y1:16,y2:H,stroke:'var(--grid)'},svg);txt('text',{x:Math.min(W-36,Math.max(36,x(v))),y:11,'font-size':10,'text-anchor':'middle',fill:'var(--muted)'},wallTick(v,off,tk.step),svg)});
          bars={};tm.forEach(function(t){var s=S[t.i],r=el('rect',{x:x(t.a),y:22+t.r*RH,width:Math.max(3,x(t.b)-x(t.a)),height:RH-1,fill:OC[s.o]||'var(--o-other)','class':'bar','data-i':t.i},svg);
            var ti=el('title',{},r);ti.textContent=s.id+' '+s.who+' — '+s.o+', '+wall(t.a,s.off);bars[t.i]=r;r.addEventListener('click',function(){jump(t.i)})});
          box.appendChild(svg);applyDim()}
        function extent2(s){if(s.s==null)return[null,null];var e=s.e==null?s.s:Math.max(s.s,s.e);return[s.s,e]}
        function jump(i){var c=byI[i];if(!c)return;if(c.hidden){reset();apply()}c.scrollIntoView({block:'start'});var h=c.querySelector('h2');if(h)h.focus({preventScroll:true});
          c.classList.remove('flash');void c.offsetWidth;c.classList.add('flash');draw(i);document.body.dataset.jumped=i}
        // ---- filters, search, sort ----
        var F={outcome:document.getElementById('f-outcome'),finding:document.getElementById('f-finding'),sdk:document.getElementById('f-sdk'),q:document.getElementById('f-q'),sort:document.getElementById('f-sort')};
        var text={};function hay(c){return text[c.dataset.i]||(text[c.dataset.i]=c.textContent.toLowerCase())}
        function match(c){var o=F.outcome.value,k=F.finding.value,sd=F.sdk.value,q=F.q.value.trim().toLowerCase();
          if(o=='failing'&&c.dataset.outcome=='completed')return false;if(o&&o!='failing'&&c.dataset.outcome!=o)return false;
          if(k&&(' '+c.dataset.kinds+' ').indexOf(' '+k+' ')<0)return false;if(sd&&c.dataset.sdk!=sd)return false;
          if(q&&q.split(/\s+/).some(function(w){return hay(c).indexOf(w)<0}))return false;return true}
        var shown={};
        function apply(){var n=0;cards.forEach(function(c){var m=match(c);c.hidden=!m;if(rows[c.dataset.i])rows[c.dataset.i].hidden=!m;shown[c.dataset.i]=m;if(m)n++});
          document.getElementById('f-count').textContent=n==cards.length?cards.length+' sessions':'showing '+n+' of '+cards.length+' sessions';applyDim();save()}
        function applyDim(){Object.keys(bars).forEach(function(i){bars[i].classList.toggle('dim',shown[i]===false)})}
        var RANK={'completed':6,'stopped-by-host':4,'interrupted':4,'truncated':3,'unknown':5,'failed-to-connect':0,'failed':0,'socket-error':1,'killed':2};
        function sort(){var m=F.sort.value,main=document.getElementById('cards'),cs=cards.slice();
          function key(c){return m=='outcome'?RANK[c.dataset.outcome]:m=='findings'?-c.dataset.nf:m=='duration'?-c.dataset.dur:0}
          cs.sort(function(p,q){return (key(p)-key(q))||(p.dataset.i-q.dataset.i)});cs.forEach(function(c){main.appendChild(c)});save()}
        function reset(){F.outcome.value='';F.finding.value='';F.sdk.value='';F.q.value=''}
        function save(){var p=[];['outcome','finding','sdk','q','sort'].forEach(function(k){if(F[k].value&&!(k=='sort'&&F[k].value=='time'))p.push(k+'='+encodeURIComponent(F[k].value))});
          try{history.replaceState(null,'',p.length?'#'+p.join('&'):location.pathname+location.search)}catch(e){}}
        ['outcome','finding','sdk'].forEach(function(k){F[k].addEventListener('change',apply)});F.q.addEventListener('input',apply);F.sort.addEventListener('change',sort);
        // State from the URL: `#outcome=failing&q=…` (what the page writes), and `?jump=N` / `?probe=1` for tests.
        var P={};(location.search.slice(1)+'&'+location.hash.slice(1)).split('&').forEach(function(kv){if(!kv)return;var j=kv.indexOf('=');P[decodeURIComponent(j<0?kv:kv.slice(0,j))]=j<0?'':decodeURIComponent(kv.slice(j+1))});
        ['outcome','finding','sdk','q','sort'].forEach(function(k){if(P[k]!=null&&F[k])F[k].value=P[k]});
        drawOverview();apply();if(P.sort)sort();
        if(P.jump!=null){var b=bars[P.jump];if(b)b.dispatchEvent(new MouseEvent('click',{bubbles:true}));else jump(P.jump)}
        else if(/^s-\d+$/.test(location.hash.slice(1)))jump(location.hash.slice(3));
        if(P.probe!=null)setTimeout(function(){var d=document.body.dataset,de=document.documentElement;d.probeOverflow=de.scrollWidth-window.innerWidth;
          d.probeVisible=cards.filter(function(c){return!c.hidden}).length;d.probeHiddenCompleted=cards.filter(function(c){return c.hidden&&c.dataset.outcome=='completed'}).length;
          d.probeScrollY=Math.round(window.scrollY);d.probeDrawn=document.querySelectorAll('.chart svg').length;d.probeBars=document.querySelectorAll('#ov rect.bar').length;
          d.probeMaxTicks=Math.max.apply(null,[0].concat([].map.call(document.querySelectorAll('.chart svg, #ov svg'),function(s){return s.querySelectorAll(':scope > line').length})));
          if(P.jump!=null&&byI[P.jump]){var J=P.jump;d.probeTargetTop=Math.round(byI[J].getBoundingClientRect().top);
            var mk=document.querySelector('#tl-'+J+' .mark[data-src]');if(mk){mk.dispatchEvent(new MouseEvent('click',{bubbles:true}));d.probeDetail=document.getElementById('dt-'+J).textContent}
            if(view[J]){var w0=view[J][1]-view[J][0];byI[J].querySelector('.tlbar button[data-z=in]').click();d.probeZoom=((view[J][1]-view[J][0])/w0).toFixed(2)}}
          d.probeDone='1'},300);
        })();
        """#
}
