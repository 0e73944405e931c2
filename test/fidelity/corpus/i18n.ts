/**
 * Documents in other writing systems, each with its `lang` (and `dir` for right-to-left), naming
 * only generic font families: an Arabic tax invoice and a Hebrew notice to residents (both with
 * Latin and numbers mixed into right-to-left text), Japanese meeting minutes, a Simplified
 * Chinese product manual, a Traditional Chinese tour itinerary, a Korean building notice, and two
 * documents full of emoji (a team chat export and a release status report).
 */
import { htmlDocument, inlineStyle } from './assets.ts';
import type { FidelityCase } from './types.ts';

const BASE_CSS = `
  @page { size: A4; margin: 18mm 16mm; }
  body { font-family: sans-serif; font-size: 11pt; line-height: 1.7; color: #1f2937; margin: 0; }
  h1 { font-size: 18pt; margin: 0 0 4mm; }
  h2 { font-size: 13pt; margin: 6mm 0 2mm; }
  table { border-collapse: collapse; width: 100%; margin: 3mm 0; }
  th, td { border: 1px solid #cbd5e1; padding: 2mm 3mm; text-align: start; }
  th { background: #f1f5f9; }
  .num { text-align: end; font-variant-numeric: tabular-nums; }
`;

function arabicInvoice(): FidelityCase {
  const css = `${BASE_CSS}
    header { display: flex; justify-content: space-between; border-bottom: 3px solid #0f766e; padding-bottom: 3mm; margin-bottom: 5mm; }
    header .company { font-size: 15pt; font-weight: bold; color: #0f766e; }
    .info { display: grid; grid-template-columns: 1fr 1fr; gap: 2mm 8mm; margin-bottom: 4mm; }
    .totals { width: 50%; margin-inline-start: auto; }
    .totals td:first-child { background: #f8fafc; }
    .grand td { font-weight: bold; font-size: 12.5pt; background: #ccfbf1 !important; }
  `;
  const body = `
    <header><div><div class="company">شركة الندى للتجارة والمقاولات</div><div>الرياض، حي العليا، طريق الملك فهد</div><div>الرقم الضريبي: 300145678900003</div></div>
      <div><h1>فاتورة ضريبية</h1></div></header>
    <div class="info">
      <div><b>رقم الفاتورة:</b> INV-2024-1248</div><div><b>تاريخ الإصدار:</b> 15 سبتمبر 2024</div>
      <div><b>العميل:</b> مؤسسة الأفق للخدمات التعليمية</div><div><b>تاريخ الاستحقاق:</b> 15 أكتوبر 2024</div>
      <div><b>العنوان:</b> جدة، شارع التحلية</div><div><b>رقم أمر الشراء:</b> PO-7781</div>
    </div>
    <p>السادة مؤسسة الأفق للخدمات التعليمية المحترمين، تحية طيبة وبعد،<br>
      نشكركم على ثقتكم بنا، ونرفق لكم فاتورة الطلب رقم 1248 الخاص بتجهيز قاعات التدريب، وفقاً لعرض السعر المعتمد بتاريخ 2 سبتمبر 2024.</p>
    <table>
      <thead><tr><th>#</th><th>الوصف</th><th class="num">الكمية</th><th class="num">سعر الوحدة (ريال)</th><th class="num">المجموع (ريال)</th></tr></thead>
      <tbody>
        <tr><td>1</td><td>طابعة ليزر ملونة HP Color LaserJet Pro</td><td class="num">2</td><td class="num">1,450.00</td><td class="num">2,900.00</td></tr>
        <tr><td>2</td><td>جهاز عرض (بروجكتر) بدقة Full HD</td><td class="num">3</td><td class="num">2,200.00</td><td class="num">6,600.00</td></tr>
        <tr><td>3</td><td>ورق طباعة A4، علبة من 5 رزم</td><td class="num">10</td><td class="num">95.00</td><td class="num">950.00</td></tr>
        <tr><td>4</td><td>سبورة بيضاء مغناطيسية 120 × 240 سم</td><td class="num">4</td><td class="num">380.00</td><td class="num">1,520.00</td></tr>
        <tr><td>5</td><td>خدمة التركيب والصيانة السنوية</td><td class="num">1</td><td class="num">1,200.00</td><td class="num">1,200.00</td></tr>
      </tbody>
    </table>
    <table class="totals">
      <tr><td>المجموع الفرعي</td><td class="num">13,170.00</td></tr>
      <tr><td>ضريبة القيمة المضافة (15%)</td><td class="num">1,975.50</td></tr>
      <tr class="grand"><td>الإجمالي المستحق</td><td class="num">15,145.50 ريال سعودي</td></tr>
    </table>
    <h2>طريقة الدفع</h2>
    <p>يرجى تحويل المبلغ إلى حسابنا لدى مصرف الراجحي، رقم الآيبان SA03 8000 0000 6080 1016 7519، مع ذكر رقم الفاتورة في خانة الملاحظات.
      يرجى السداد خلال ثلاثين يوماً من تاريخ الفاتورة.</p>
    <p>شكراً لتعاملكم معنا.</p>`;
  return {
    name: 'rtl-arabic-invoice',
    title: 'Arabic tax invoice, dir="rtl", with Latin product names, IBAN and numbers mixed into the right-to-left text',
    html: htmlDocument({ lang: 'ar', dir: 'rtl', title: 'فاتورة ضريبية INV-2024-1248', head: inlineStyle(css), body }),
  };
}

function hebrewNotice(): FidelityCase {
  const css = `${BASE_CSS}
    .banner { background: #1d4ed8; color: #fff; padding: 4mm 6mm; border-radius: 2mm; margin-bottom: 5mm; }
    .banner h1 { margin: 0; }
    .signature { margin-top: 8mm; }
  `;
  const body = `
    <div class="banner"><h1>עדכון לתושבי השכונה: עבודות תשתית ברחוב הרצל</h1><div>מחלקת ההנדסה העירונית · 27 באוקטובר 2024</div></div>
    <p>תושבים יקרים,</p>
    <p>ברצוננו לעדכן כי ביום ראשון, 3 בנובמבר 2024, יחלו עבודות להחלפת צנרת המים והביוב ברחוב הרצל, בקטע שבין רחוב ויצמן לרחוב ז'בוטינסקי.
      העבודות צפויות להימשך כשישה שבועות.</p>
    <p>במהלך העבודות תיסגר התנועה לכלי רכב בקטע זה בשעות 07:00–17:00. הגישה להולכי רגל ולבתי העסק תישמר בכל עת.
      תחנת האוטובוס "הרצל/ויצמן" (קווים 12 ו־29) תועתק זמנית לרחוב ויצמן 12.</p>
    <h2>לוח זמנים</h2>
    <table>
      <thead><tr><th>שלב</th><th>תאריכים</th><th>קטע העבודה</th></tr></thead>
      <tbody>
        <tr><td>שלב א׳</td><td>3.11–14.11</td><td>מרחוב ויצמן עד רחוב סוקולוב</td></tr>
        <tr><td>שלב ב׳</td><td>17.11–28.11</td><td>מרחוב סוקולוב עד רחוב ז'בוטינסקי</td></tr>
        <tr><td>שלב ג׳</td><td>1.12–12.12</td><td>שיקום המדרכות וסלילת הכביש מחדש</td></tr>
      </tbody>
    </table>
    <p>ייתכנו הפסקות מים מתוכננות של עד ארבע שעות. הודעה על כל הפסקה תימסר לפחות 48 שעות מראש, בהודעת SMS ובלוח המודעות שבכניסה לכל בניין.</p>
    <p>לשאלות ולפניות: מוקד עירוני 106, או בדואר אלקטרוני לכתובת handasa@city.example.org.il.</p>
    <p>אנו מתנצלים על אי הנוחות ומודים לכם על הסבלנות.</p>
    <div class="signature">בברכה,<br><b>מחלקת ההנדסה העירונית</b></div>`;
  return {
    name: 'rtl-hebrew-notice',
    title: 'Hebrew notice to residents, dir="rtl", with a schedule table, times, dates and a Latin e-mail address',
    html: htmlDocument({ lang: 'he', dir: 'rtl', title: 'עדכון לתושבים: עבודות תשתית ברחוב הרצל', head: inlineStyle(css), body }),
  };
}

function japaneseMinutes(): FidelityCase {
  const css = `${BASE_CSS}
    body { line-height: 1.8; }
    h1 { text-align: center; border-bottom: 2px solid #334155; padding-bottom: 2mm; }
    dl { display: grid; grid-template-columns: 6em 1fr; gap: 1mm 4mm; }
    dt { font-weight: bold; }
    dd { margin: 0; }
    .end { text-align: end; margin-top: 6mm; }
  `;
  const body = `
    <h1>第3四半期 製品企画会議 議事録</h1>
    <dl>
      <dt>日時</dt><dd>2024年10月8日（火）14:00～15:30</dd>
      <dt>場所</dt><dd>本社 5階 会議室A</dd>
      <dt>出席者</dt><dd>田中（議長）、佐藤、鈴木、高橋、伊藤、渡辺（記録）</dd>
    </dl>
    <h2>1. 第3四半期の販売実績について</h2>
    <ul>
      <li>第3四半期の売上高は前年同期比8.2%増の12億4,000万円となり、計画を上回った。</li>
      <li>特にオンライン販売が好調で、売上全体の35%を占めた。</li>
      <li>一方、関西地区の店舗販売は前年を3%下回っており、原因の分析を進める。</li>
    </ul>
    <h2>2. 新製品「エアリーボトル」の発売日程</h2>
    <ul>
      <li>発売は2025年2月を予定する。ただし、金型の納期が2週間遅れているため、最終決定は11月の会議で行う。</li>
      <li>価格は税込2,980円とし、色は白・紺・若草の3色で展開する。</li>
    </ul>
    <h2>3. 年末商戦に向けた販促計画</h2>
    <ul>
      <li>SNS広告の予算を前年の1.5倍に増額することで合意した。</li>
      <li>主要50店舗で店頭キャンペーンを実施する（12月1日～25日）。</li>
    </ul>
    <h2>決定事項・担当</h2>
    <table>
      <thead><tr><th>項目</th><th>担当</th><th>期限</th></tr></thead>
      <tbody>
        <tr><td>発売日の最終案の作成</td><td>佐藤</td><td>11月5日</td></tr>
        <tr><td>販促予算の見直し</td><td>高橋</td><td>10月25日</td></tr>
        <tr><td>店頭用ポスターのデザイン確認</td><td>伊藤</td><td>10月31日</td></tr>
        <tr><td>関西地区の販売分析</td><td>鈴木</td><td>11月1日</td></tr>
      </tbody>
    </table>
    <p>次回会議：2024年11月12日（火）14:00～ 本社 5階 会議室A</p>
    <p class="end">以上</p>`;
  return {
    name: 'cjk-japanese-minutes',
    title: 'Japanese meeting minutes (lang="ja"): headings, lists, a table of actions, full-width punctuation',
    html: htmlDocument({ lang: 'ja', title: '第3四半期 製品企画会議 議事録', head: inlineStyle(css), body }),
  };
}

function chineseManual(): FidelityCase {
  const css = `${BASE_CSS}
    h1 { color: #0f766e; }
    .model { color: #64748b; margin-top: -3mm; margin-bottom: 5mm; }
    ol li, ul li { margin-bottom: 1mm; }
    .warn { border: 1px solid #f59e0b; background: #fffbeb; padding: 3mm 4mm; border-radius: 2mm; }
    .faq dt { font-weight: bold; margin-top: 2mm; }
    .faq dd { margin: 0 0 0 2em; }
  `;
  const body = `
    <h1>智能空气净化器 使用说明书</h1>
    <div class="model">型号：KJ-500 · 使用前请仔细阅读本说明书，并妥善保管。</div>
    <div class="warn"><h2 style="margin-top:0">安全注意事项</h2>
    <ol>
      <li>请使用额定电压为220V、频率为50Hz的电源。</li>
      <li>请勿在浴室等潮湿环境中使用本产品。</li>
      <li>清洁或更换滤网前，请务必拔下电源插头。</li>
      <li>请勿让儿童单独操作本产品。</li>
    </ol></div>
    <h2>技术参数</h2>
    <table><tbody>
      <tr><th>型号</th><td>KJ-500</td><th>额定功率</th><td>55 W</td></tr>
      <tr><th>洁净空气量（颗粒物）</th><td>500 m³/h</td><th>适用面积</th><td>35–60 m²</td></tr>
      <tr><th>噪音</th><td>≤ 62 dB(A)</td><th>滤网寿命</th><td>约4000小时</td></tr>
      <tr><th>净重</th><td>8.5 kg</td><th>尺寸</th><td>380 × 220 × 650 mm</td></tr>
    </tbody></table>
    <h2>使用方法</h2>
    <p>按下电源键开机，指示灯亮起后，产品进入自动模式。在自动模式下，净化器会根据空气质量自动调节风速。
      指示灯为蓝色表示空气质量优，黄色表示良，红色表示差。</p>
    <p>按“风速”键可在低、中、高、强四档之间切换；按住“定时”键三秒可设置1至12小时的定时关机。</p>
    <h2>常见问题</h2>
    <dl class="faq">
      <dt>问：为什么开机后有异味？</dt><dd>答：新滤网可能带有轻微气味，通常使用数天后会自行消失。</dd>
      <dt>问：滤网需要多久更换一次？</dt><dd>答：建议每6至8个月更换一次。滤网指示灯亮起时，请及时更换。</dd>
    </dl>
    <h2>售后服务</h2>
    <p>本产品保修期为一年。如有问题，请拨打客服热线 400-800-1234（周一至周日 9:00–21:00）。</p>`;
  return {
    name: 'cjk-chinese-simplified-manual',
    title: 'Simplified Chinese product manual (lang="zh-CN"): warnings box, specification table, FAQ',
    html: htmlDocument({ lang: 'zh-CN', title: '智能空气净化器 KJ-500 使用说明书', head: inlineStyle(css), body }),
  };
}

function traditionalItinerary(): FidelityCase {
  const css = `${BASE_CSS}
    h1 { color: #9d174d; }
    .day { border-inline-start: 4px solid #f9a8d4; padding-inline-start: 4mm; margin: 4mm 0; break-inside: avoid; }
    .day h2 { margin-top: 0; }
    .day p { margin: 0; }
    .day time { display: inline-block; width: 4em; font-weight: bold; color: #9d174d; }
  `;
  const day = (title: string, items: readonly (readonly [string, string])[]) =>
    `<section class="day"><h2>${title}</h2>${items.map(([time, text]) => `<p><time>${time}</time>${text}</p>`).join('')}</section>`;
  const body = `
    <h1>花東三日遊行程表</h1>
    <p>出發日期：2024年11月22日（五）至11月24日（日）· 團號：HL-1122 · 領隊：陳怡君</p>
    ${day('第一天：台北 → 花蓮', [
      ['08:00', '台北車站集合，搭乘普悠瑪號前往花蓮。'],
      ['11:30', '抵達花蓮，午餐品嚐當地特色料理。'],
      ['13:30', '七星潭海岸散步，欣賞太平洋景色。'],
      ['18:00', '入住飯店，晚餐後自由活動，可逛東大門夜市。'],
    ])}
    ${day('第二天：花蓮 → 台東', [
      ['08:30', '沿台11線南下，途經石梯坪。'],
      ['12:00', '於成功漁港享用海鮮午餐。'],
      ['14:00', '三仙台，步行跨海步橋。'],
      ['17:30', '抵達台東，入住知本溫泉飯店。'],
    ])}
    ${day('第三天：台東 → 台北', [
      ['09:00', '鹿野高台，欣賞縱谷風光。'],
      ['11:00', '池上伯朗大道騎單車。'],
      ['12:30', '午餐品嚐池上便當。'],
      ['15:30', '搭乘火車返回台北，行程結束。'],
    ])}
    <h2>費用</h2>
    <table><thead><tr><th>項目</th><th class="num">費用（新台幣）</th></tr></thead><tbody>
      <tr><td>大人（每人）</td><td class="num">12,800 元</td></tr>
      <tr><td>兒童（12歲以下，不佔床）</td><td class="num">9,600 元</td></tr>
      <tr><td>單人房加價</td><td class="num">3,500 元</td></tr>
    </tbody></table>
    <h2>注意事項</h2>
    <ul>
      <li>請攜帶身分證件及健保卡。</li>
      <li>山區與海邊早晚溫差大，建議攜帶薄外套。</li>
      <li>費用包含交通、住宿及行程中註明之餐食，不含個人消費。</li>
    </ul>`;
  return {
    name: 'cjk-chinese-traditional-itinerary',
    title: 'Traditional Chinese tour itinerary (lang="zh-TW"): timed day plans, price table',
    html: htmlDocument({ lang: 'zh-TW', title: '花東三日遊行程表', head: inlineStyle(css), body }),
  };
}

function koreanNotice(): FidelityCase {
  const css = `${BASE_CSS}
    h1 { text-align: center; font-size: 22pt; letter-spacing: .1em; }
    .box { border: 2px solid #1e40af; padding: 4mm 6mm; margin: 5mm 0; }
    .box ul { margin: 0; padding-inline-start: 1.2em; }
    .sign { text-align: center; margin-top: 10mm; font-size: 13pt; }
  `;
  const body = `
    <h1>승강기 정기 점검 안내</h1>
    <p>입주민 여러분께 알려 드립니다.</p>
    <p>안전한 승강기 이용을 위하여 아래와 같이 정기 점검을 실시합니다. 점검 시간 동안에는 해당 동의 승강기 운행이 중지되오니
      입주민 여러분의 양해를 부탁드립니다.</p>
    <div class="box"><ul>
      <li>점검 일시: 2024년 11월 14일(목) 오전 10시 ~ 오후 4시</li>
      <li>점검 대상: 101동 ~ 105동 승강기 전체 (10대)</li>
      <li>점검 내용: 제동 장치, 비상 통화 장치, 도어 안전 장치 점검</li>
    </ul></div>
    <table>
      <thead><tr><th>동</th><th>점검 시간</th><th>비고</th></tr></thead>
      <tbody>
        <tr><td>101동</td><td>10:00 ~ 11:00</td><td></td></tr>
        <tr><td>102동</td><td>11:00 ~ 12:00</td><td></td></tr>
        <tr><td>103동</td><td>13:00 ~ 14:00</td><td>점심시간 이후 시작</td></tr>
        <tr><td>104동</td><td>14:00 ~ 15:00</td><td></td></tr>
        <tr><td>105동</td><td>15:00 ~ 16:00</td><td></td></tr>
      </tbody>
    </table>
    <p>점검 중에는 계단을 이용해 주시기 바랍니다. 거동이 불편하신 분은 관리사무소(☎ 02-123-4567)로 미리 연락해 주시면 도움을 드리겠습니다.</p>
    <div class="sign">2024년 11월 7일<br><b>행복마을아파트 관리사무소장</b></div>`;
  return {
    name: 'cjk-korean-notice',
    title: 'Korean apartment building notice (lang="ko"): Hangul text, schedule table',
    html: htmlDocument({ lang: 'ko', title: '승강기 정기 점검 안내', head: inlineStyle(css), body }),
  };
}

function emojiChat(): FidelityCase {
  const messages: readonly (readonly [string, string, string, string])[] = [
    ['09:02', 'Priya', '#7c3aed', 'Morning all ☀️ Release train leaves at 11:00 today 🚂'],
    ['09:04', 'Tom', '#0891b2', 'Morning! 👋 Android build is green ✅, iOS still compiling ⏳'],
    ['09:05', 'Mei', '#db2777', 'I found a crash on the settings screen 🐛😬 fixing now 👩‍💻'],
    ['09:11', 'Priya', '#7c3aed', 'Thanks Mei 🙏 can we get it in by 10:30? ⏰'],
    ['09:12', 'Mei', '#db2777', 'Yep 👍🏽 PR is up: fix is one line 🤦‍♀️'],
    ['09:40', 'Tom', '#0891b2', 'iOS is green too ✅✅ Release notes drafted 📝'],
    ['10:28', 'Mei', '#db2777', 'Fix merged 🎉'],
    ['10:31', 'Kwame', '#16a34a', 'QA signed off on 🇬🇧 🇩🇪 🇯🇵 🇧🇷 store listings 🌍'],
    ['11:00', 'Priya', '#7c3aed', '🚀🚀🚀 Shipped! Version 5.2 is rolling out to 10% of users'],
    ['11:02', 'Tom', '#0891b2', 'Nice work, team ❤️🧡💛💚💙💜 cake in the kitchen 🍰☕'],
    ['11:05', 'Kwame', '#16a34a', 'Family photo from the launch party last time 👨‍👩‍👧‍👦 — same again? 🥳'],
  ];
  const css = `
    @page { size: A4; margin: 16mm; }
    body { font-family: sans-serif; font-size: 11pt; color: #111827; margin: 0; }
    h1 { font-size: 16pt; margin: 0; } .sub { color: #6b7280; font-size: 9pt; margin-bottom: 6mm; }
    .msg { display: flex; gap: 3mm; margin-bottom: 3.5mm; break-inside: avoid; }
    .avatar { width: 9mm; height: 9mm; border-radius: 50%; color: #fff; font-weight: bold; display: flex; align-items: center; justify-content: center; flex: none; }
    .meta { font-size: 9pt; color: #6b7280; } .meta b { color: #111827; font-size: 10.5pt; margin-inline-end: 2mm; }
    .text { margin-top: .5mm; }
    .reactions { margin-top: 1mm; } .reactions span { display: inline-block; border: 1px solid #e5e7eb; border-radius: 99px; padding: 0 2mm; font-size: 9pt; margin-inline-end: 1mm; background: #f9fafb; }
  `;
  const reactions = ['👍 3', '🎉 5', '😂 2', '❤️ 4', '👀 1'];
  const body = `
    <h1>#mobile-release</h1><div class="sub">Channel export · Tuesday 12 March 2024 · 11 messages · times in GMT</div>
    ${messages
      .map(
        ([time, name, colour, text], i) => `<div class="msg"><div class="avatar" style="background:${colour}">${name[0]}</div><div>
        <div class="meta"><b>${name}</b>${time}</div><div class="text">${text}</div>
        ${i % 3 === 2 ? `<div class="reactions"><span>${reactions[i % reactions.length]}</span><span>${reactions[(i + 2) % reactions.length]}</span></div>` : ''}</div></div>`,
      )
      .join('\n')}`;
  return {
    name: 'emoji-chat-transcript',
    title: 'Team chat export full of emoji: ZWJ sequences, skin tones, flags, hearts, reactions',
    html: htmlDocument({ title: '#mobile-release — chat export', head: inlineStyle(css), body }),
  };
}

function emojiStatus(): FidelityCase {
  const css = `${BASE_CSS}
    table td:first-child { white-space: nowrap; }
    .legend span { margin-inline-end: 6mm; }
  `;
  const rows = [
    ['✅', 'Checkout redesign', 'Shipped to 100% of users on 4 June', 'Done'],
    ['🟢', 'Search relevance', 'Click-through up 6.1% in the A/B test', 'On track'],
    ['🟡', 'Loyalty programme', 'Partner contract awaiting signature ✍️', 'At risk'],
    ['🔴', 'Warehouse scanners', 'Firmware bug blocks roll-out at 2 sites 🐞', 'Blocked'],
    ['🚧', 'Accessibility audit', 'Fixes for 14 of 31 issues merged ♿', 'In progress'],
    ['📦', 'Packaging change', 'Plastic-free boxes from July 🌱', 'Planned'],
  ];
  const body = `
    <h1>📊 Weekly status — week 23</h1>
    <p class="legend"><span>✅ done</span><span>🟢 on track</span><span>🟡 at risk</span><span>🔴 blocked</span></p>
    <table><thead><tr><th></th><th>Workstream</th><th>Update</th><th>Status</th></tr></thead>
      <tbody>${rows.map(([icon, name, update, status]) => `<tr><td>${icon}</td><td>${name}</td><td>${update}</td><td>${status}</td></tr>`).join('')}</tbody></table>
    <h2>🏆 Wins</h2>
    <ul><li>🎯 Conversion rate hit 3.4%, our best week this year</li><li>⭐ App rating back up to 4.7 after the crash fix</li><li>🤝 Two new wholesale partners signed in 🇳🇱 and 🇮🇪</li></ul>
    <h2>⚠️ Risks</h2>
    <ul><li>🌧️ Delivery delays expected during the rail strike on 11–12 June</li><li>💷 Card fees rise 0.2 pt from 1 July</li></ul>
    <p>Questions? Ping <b>@ops-leads</b> 💬</p>`;
  return {
    name: 'emoji-status-report',
    title: 'Weekly status report using emoji as status markers, icons in headings and flags',
    html: htmlDocument({ title: 'Weekly status — week 23', head: inlineStyle(css), body }),
  };
}

export function i18nCases(): FidelityCase[] {
  return [arabicInvoice(), hebrewNotice(), japaneseMinutes(), chineseManual(), traditionalItinerary(), koreanNotice(), emojiChat(), emojiStatus()];
}
